/**
 * The real ConfigurableFirmata on a simulated Uno (`../shared/firmata-real`,
 * when this machine has it): starts its bridge (board.sh) in a fresh folder
 * and reads what the bridge writes: the decoded wire log (bridge.log), the
 * counted shaft positions (phys.json), and its STOP-PROBE lines (how many
 * step pulses followed each stop command, and when the last one came).
 * For the live test (test/live/firmata-real.test.ts) and the benchmarks
 * (bench/firmata-real-*.ts); the project's own tests never need it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Where the shared real-firmware peer lives: FIRMATA_REAL_DIR, or ../shared/firmata-real beside the checkout (run from its root). */
export function firmataRealDir(): string {
  return process.env.FIRMATA_REAL_DIR ?? path.resolve(process.cwd(), '..', 'shared', 'firmata-real');
}

export function firmataRealPresent(): boolean {
  return existsSync(path.join(firmataRealDir(), 'board.sh'));
}

export interface StopProbe {
  /** The stop command, as the bridge decoded it. */
  what: string;
  /** Wall time (s, the host's clock as the bridge logs it) at which the command reached the board. */
  commandWallS: number;
  axes: Record<'theta' | 'phi', { pulses: number; lastPulseMs: number }>;
}

export interface RealBoard {
  dir: string;
  tty: string;
  /** A control command: `fault phi on`, `switch theta closed`, `reset`, `mark TEXT`. */
  ctl(command: string): void;
  log(): string;
  phys(): Record<string, number>;
  /** The final STOP-PROBE lines (not the interim ones) logged so far. */
  stopProbes(): StopProbe[];
  kill(): void;
}

/** Starts the bridge (`firmware`: firmata-pos.elf at 57600, firmata-pos115.elf at 115200); resolves once its pty exists and the sketch has booted. */
export async function startRealBoard(opts: { firmware?: string; bridgeArgs?: string[] } = {}): Promise<RealBoard> {
  const dir = mkdtempSync(path.join(tmpdir(), 'firmata-real-'));
  const script = path.join(firmataRealDir(), 'board.sh');
  // No pipes: the bridge board.sh leaves running would hold them open, and the script's end would never be seen.
  await new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [script, dir, '--', ...(opts.bridgeArgs ?? [])], { env: { ...process.env, FIRMWARE: opts.firmware ?? 'firmata-pos115.elf' }, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${script} exited with ${code}`))));
  });
  const read = (name: string) => (existsSync(path.join(dir, name)) ? readFileSync(path.join(dir, name), 'utf8') : '');
  return {
    dir,
    tty: path.join(dir, 'tty'),
    ctl: (command) => writeFileSync(path.join(dir, 'ctl'), `${command}\n`),
    log: () => read('bridge.log'),
    phys: () => JSON.parse(read('phys.json') || '{}') as Record<string, number>,
    stopProbes: () => parseStopProbes(read('bridge.log')),
    kill: () => {
      const pid = Number(read('bridge.pid'));
      if (pid > 0) {
        try {
          process.kill(pid);
        } catch {
          // already gone
        }
      }
    },
  };
}

/** The final STOP-PROBE lines of a bridge log. */
export function parseStopProbes(log: string): StopProbe[] {
  const out: StopProbe[] = [];
  const lines = log.split('\n');
  lines.forEach((line, i) => {
    const m = /^\[wall [0-9.]+ sim\s+[0-9.]+\] STOP-PROBE after "([^"]+)" reached the USART at sim [0-9.]+:(.*)$/.exec(line);
    if (!m) return;
    let commandWallS = NaN;
    for (let k = i - 1; k >= 0; k--) {
      const c = /^\[wall ([0-9.]+) sim[^\]]*\] H> (.*?)\s+\[/.exec(lines[k]);
      if (c && c[2] === m[1]) {
        commandWallS = Number(c[1]);
        break;
      }
    }
    const axis = (name: string) => {
      const a = new RegExp(`${name} was \\w+, (\\d+) pulses after it, last pulse \\+([0-9.]+) ms`).exec(m[2]);
      return { pulses: a ? Number(a[1]) : NaN, lastPulseMs: a ? Number(a[2]) : NaN };
    };
    out.push({ what: m[1], commandWallS, axes: { theta: axis('theta'), phi: axis('phi') } });
  });
  return out;
}
