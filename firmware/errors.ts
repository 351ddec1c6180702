/**
 * The firmware's error catalogue: every error the positioner reports has a
 * stable code here. Callers (the HTTP layer, the CLI, tests) branch on `code`.
 */
export const POSITIONER_ERRORS = {
  POS_ERR_BUSY: 'the positioner is moving or homing',
  POS_ERR_OUT_OF_RANGE: 'a target or setting is outside its allowed range',
  POS_ERR_CONFIG_READ_ONLY: 'a configuration field cannot be changed at run time',
  POS_ERR_FAULT: 'the positioner is in its error state after a hardware or homing failure',
  POS_ERR_HOMING_SWITCH_NOT_FOUND: 'homing did not find the home switch within the axis travel',
  POS_ERR_HOMING_SWITCH_STUCK: 'the home switch stayed closed after backing off it',
  POS_ERR_HARDWARE: 'a driver or controller reported a failure (driver fault, controller alarm)',
  POS_ERR_DISCONNECTED: 'the link to the motion controller is down (serial line dropped, board reset); it reconnects by itself',
  POS_ERR_NOT_HOMED: 'the controller reconnected and lost its position reference; homing is required',
  POS_ERR_CONTROLLER_REJECTED: 'the motion controller refused a command (an error:N answer)',
} as const;

export type PositionerErrorCode = keyof typeof POSITIONER_ERRORS;

export class PositionerError extends Error {
  readonly code: PositionerErrorCode;
  constructor(code: PositionerErrorCode, message: string) {
    super(message);
    this.name = 'PositionerError';
    this.code = code;
  }
}
