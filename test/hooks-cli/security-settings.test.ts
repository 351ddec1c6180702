/**
 * Every security setting switches its own check, through the real validator
 * hook: on, the command is blocked or warned about; off, that check says
 * nothing (a dangerous command with blocking off is still warned about while
 * warnings are on).
 */
import t from 'tap';
import { buildInstall, runHook, tempProject } from '../helpers/hooks';

const inst = buildInstall(t);

async function validate(settings: Record<string, unknown>, command: string) {
  const p = tempProject(t);
  p.settings({ security: settings, backup_manager: { backup_on_critical_ops: false } });
  return runHook(inst, 'command-validator', p, { tool: 'Bash', parameters: { command } });
}

t.test('dangerous_commands_blocked', async (t) => {
  const on = await validate({}, 'rm -rf /');
  t.equal(on.code, 1);
  t.match(on.json.message, /^⛔ Command blocked: recursive delete of the filesystem root/);
  const off = await validate({ dangerous_commands_blocked: false }, 'rm -rf /');
  t.equal(off.code, 0, 'not blocked');
  t.match(off.json.message, /^⚠️ recursive delete of the filesystem root/, 'still warned');
  const silent = await validate({ dangerous_commands_blocked: false, suspicious_commands_warned: false }, 'rm -rf /');
  t.equal(silent.code, 0);
  t.notMatch(silent.json.message, /⚠️|⛔/);
});

t.test('suspicious_commands_warned', async (t) => {
  const on = await validate({}, 'git reset --hard');
  t.match(on.json.message, /^⚠️ git reset --hard discards uncommitted changes/);
  const off = await validate({ suspicious_commands_warned: false }, 'git reset --hard');
  t.equal(off.code, 0);
  t.equal(off.json.message, 'Command allowed');
});

t.test('path_traversal_protection', async (t) => {
  const on = await validate({ system_files_protection: false }, 'cat ../../../../../etc/shadow');
  t.equal(on.code, 1);
  t.match(on.json.message, /⛔ Command blocked: path traversal: \.\.\/\.\.\/\.\.\/\.\.\/\.\.\/etc\/shadow climbs out of the project to the secret file \/etc\/shadow/);
  const off = await validate({ system_files_protection: false, path_traversal_protection: false }, 'cat ../../../../../etc/shadow');
  t.equal(off.code, 0);
  t.equal(off.json.message, 'Command allowed');
});

t.test('system_files_protection', async (t) => {
  // (A line appended to /etc/hosts is a warning by the lead's policy; /etc/fstab stays a system path written.)
  const on = await validate({}, 'echo "UUID=1 /data ext4 defaults 0 2" >> /etc/fstab');
  t.equal(on.code, 1);
  t.match(on.json.message, /⛔ Command blocked: redirection \(>>\) writes to the system path \/etc\/fstab/);
  const off = await validate({ system_files_protection: false }, 'echo "UUID=1 /data ext4 defaults 0 2" >> /etc/fstab');
  t.equal(off.code, 0);
  t.equal(off.json.message, 'Command allowed');
  const secret = await validate({}, 'cat ~/.aws/credentials');
  t.match(secret.json.message, /^⚠️ cat reads the secret file .*\.aws\/credentials/);
  const secretOff = await validate({ system_files_protection: false }, 'cat ~/.aws/credentials');
  t.equal(secretOff.json.message, 'Command allowed');
});
