/**
 * learner-fold: not a hook. The session-finalizer starts it detached at a
 * host answer's end (`node hooks/learner-fold.js <project>`) so that folding
 * the learner's journal into the pattern database never holds the host up.
 * It folds under the database's lock, as any fold does (all or nothing; see
 * learner.ts `fold`), logs a failure to `.hooks_data/logs/hooks.log` and
 * exits. Nothing is lost if it never runs or dies: the journal stays for the
 * next fold.
 */
import { installRootOf } from '../lib/hook-runtime';
import { fold } from '../lib/learner';
import { loadSettingsOrDefaults } from '../lib/settings';
import { appendText, dataPaths, setDefaultLockWaitMs } from '../lib/store';

function main(): void {
  const project = process.argv[2];
  if (!project) return;
  const paths = dataPaths(project);
  const { settings } = loadSettingsOrDefaults(installRootOf(__filename), project);
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
