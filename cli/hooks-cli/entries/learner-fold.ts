/**
 * learner-fold: not a hook. The session-logger and, at a host answer's end,
 * the session-finalizer start it detached when the batch schedule says fold
 * (`node hooks/learner-fold.js <project> <token>`, learner.ts `startFold`) so
 * that folding the learner's journal into the pattern database never holds
 * the host up. It folds under the database's lock, as any fold does (all or
 * nothing; see learner.ts `fold`), logs a failure to
 * `.hooks_data/logs/hooks.log`, ends the fold request its token names, and
 * exits. Nothing is lost if it never runs or dies: the journal stays for the
 * next fold, and the request goes stale.
 */
import { installRootOf } from '../lib/hook-runtime';
import { fold, releaseFold } from '../lib/learner';
import { loadSettingsOrDefaults } from '../lib/settings';
import { appendText, dataPaths, setDefaultLockWaitMs, type DataPaths } from '../lib/store';

function main(): void {
  const [project, token] = process.argv.slice(2);
  if (!project) return;
  const paths = dataPaths(project);
  try {
    foldProject(paths);
  } finally {
    if (token) releaseFold(paths, token);
  }
}

function foldProject(paths: DataPaths): void {
  const { settings } = loadSettingsOrDefaults(installRootOf(__filename), paths.project);
  if (!settings.shadow_learner.learning_enabled) return;
  setDefaultLockWaitMs(settings.performance.max_hook_execution_time);
  try {
    fold(paths, settings, new Date());
  } catch (err) {
    try {
      appendText(paths.hookLog, `${new Date().toISOString()} ERROR learner-fold: ${(err as Error).message}\n`);
    } catch {
      /* nowhere to say it */
    }
  }
}

main();
