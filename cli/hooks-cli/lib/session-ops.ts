/** Session steps shared by several hooks: taking a backup and recording it in the session. */
import { createBackup, describeBackup, type BackupMeta } from './backup';

export { describeBackup };
import type { HookContext } from './hook-runtime';
import { updateState } from './session';

export function backupAndRecord(ctx: HookContext, reason: string): BackupMeta {
  const meta = createBackup(ctx.paths, ctx.settings, reason, ctx.now, Math.max(200, ctx.remainingMs() - 200), ctx.input.sessionId);
  updateState(ctx.paths, new Date(), ctx.input.sessionId, (s) => {
    if (!s.backup_history.some((b) => b.backup_id === meta.backup_id)) {
      s.backup_history.push({ backup_id: meta.backup_id, timestamp: meta.timestamp, reason: meta.reason, success: meta.success });
    }
  });
  ctx.log(meta.success ? 'INFO' : 'ERROR', `backup ${meta.backup_id} (${meta.method}) ${reason}: ${describeBackup(meta)}`);
  return meta;
}
