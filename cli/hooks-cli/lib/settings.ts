/**
 * Loading the settings: `<install root>/config/settings.json`, then the
 * guarded project's own `.hooks_data/settings.json` if present (same schema,
 * merged key by key over the first). Every file is validated; an invalid one
 * is reported and not used.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defaultSettings, describeSchemaErrors, settingsSchema, type Settings, type SettingsValidator } from './settings-schema';

export class SettingsError extends Error {
  readonly code = 'HOOKS_ERR_SETTINGS';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.join('; ')}`);
    this.name = 'SettingsError';
  }
}

let validator: SettingsValidator | null = null;

/** In a hook bundle the validator is ajv standalone code generated at bundle time; elsewhere ajv compiles the schema. */
export function settingsValidator(): SettingsValidator {
  if (validator) return validator;
  try {
    // Provided by the bundler (build-hooks.ts); absent from the TypeScript tree.
    validator = require('./settings-validator.generated') as SettingsValidator;
  } catch {
    const Ajv = require('ajv') as typeof import('ajv').default;
    validator = new Ajv({ allErrors: true, strict: true }).compile(settingsSchema) as SettingsValidator;
  }
  return validator;
}

type Partial2<T> = { [G in keyof T]?: Partial<T[G]> };

/** Validates parsed settings; throws SettingsError naming every bad key. */
export function checkSettings(file: string, data: unknown): Partial2<Settings> {
  const validate = settingsValidator();
  if (!validate(data)) throw new SettingsError(file, describeSchemaErrors(validate.errors ?? []));
  return data as Partial2<Settings>;
}

function readSettingsFile(file: string): Partial2<Settings> | null {
  if (!fs.existsSync(file)) return null;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SettingsError(file, [(err as Error).message]);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(file, [`not valid JSON (${(err as Error).message})`]);
  }
  return checkSettings(file, data);
}

export function settingsFiles(installRoot: string, project: string): string[] {
  return [path.join(installRoot, 'config', 'settings.json'), path.join(project, '.hooks_data', 'settings.json')];
}

/** The effective settings; throws SettingsError for the first invalid file. */
export function loadSettings(installRoot: string, project: string): Settings {
  const merged = defaultSettings();
  for (const file of settingsFiles(installRoot, project)) {
    const part = readSettingsFile(file);
    if (!part) continue;
    for (const g of Object.keys(merged) as (keyof Settings)[]) Object.assign(merged[g], part[g] ?? {});
  }
  const cm = merged.context_monitor;
  if (cm.emergency_threshold < cm.backup_threshold) {
    throw new SettingsError(settingsFiles(installRoot, project)[0], [
      `context_monitor.emergency_threshold (${cm.emergency_threshold}) is below backup_threshold (${cm.backup_threshold})`,
    ]);
  }
  return merged;
}

/** For the hooks: the effective settings, or the defaults plus the problem (reported, never fatal). */
export function loadSettingsOrDefaults(installRoot: string, project: string): { settings: Settings; problem: string | null } {
  try {
    return { settings: loadSettings(installRoot, project), problem: null };
  } catch (err) {
    return { settings: defaultSettings(), problem: `${(err as Error).message}; using the defaults until it is fixed` };
  }
}
