/**
 * The one table of the places code names by expression (lib/code-places.ts): the home, the working
 * directory and an app's project, per family of languages, and that the three readers of code
 * (inline-code.ts for scripts, command-rules.ts for languages without a table, framework-rules.ts
 * for app consoles) judge through it.
 */
import t from 'tap';
import { CODE_PLACES, placesIn } from '../../cli/hooks-cli/lib/code-places';
import { allowsAll, blocksAll } from '../helpers/validator-verdict';

t.test('each family rewrites its expressions into the literal of the place they name', async (t) => {
  t.equal(placesIn('script', "shutil.rmtree(os.path.expanduser('~'))"), 'shutil.rmtree("~")');
  t.equal(placesIn('script', 'fs.rmSync(process.cwd(), {recursive: true})'), 'fs.rmSync(".", {recursive: true})');
  t.equal(placesIn('script', 'rmtree($ENV{HOME})'), 'rmtree("~")');
  t.equal(placesIn('compiled', 'os.RemoveAll(os.UserHomeDir())'), 'os.RemoveAll("~")');
  t.equal(placesIn('compiled', 'new File(System.getProperty("user.home")).deleteRecursively()'), 'new File("~").deleteRecursively()');
  t.equal(placesIn('compiled', "rmdir(getenv('HOME'), 's')"), 'rmdir("~", \'s\')', "MATLAB's single-quoted getenv('HOME')");
  t.equal(placesIn('compiled', 'rm(pwd(); recursive=true)'), 'rm("."; recursive=true)');
  t.equal(placesIn('php-app', "File::deleteDirectory(storage_path('app'))"), 'File::deleteDirectory("./storage/app")');
  t.equal(placesIn('php-app', 'File::deleteDirectory(resource_path())'), 'File::deleteDirectory("./resources")');
  t.equal(placesIn('ruby-app', 'FileUtils.rm_rf(Rails.root.to_s)'), 'FileUtils.rm_rf(".")');
});

t.test('a family reads only its own rows: a script reads no JVM spelling, an app console no home', async (t) => {
  t.equal(placesIn('script', 'os.UserHomeDir()'), 'os.UserHomeDir()');
  t.equal(placesIn('php-app', 'getenv("HOME")'), 'getenv("HOME")');
  for (const family of ['script', 'compiled', 'php-app', 'ruby-app'] as const) t.ok(CODE_PLACES.some((r) => r.family === family), `${family} has rows`);
  t.ok(CODE_PLACES.every((r) => r.expr.global), 'every row replaces all its occurrences');
});

t.test('the three readers judge the places through the table', async (t) => {
  blocksAll(t, [
    // inline-code.ts (scripts)
    "python3 -c \"import shutil, os; shutil.rmtree(os.path.expanduser('~'))\"",
    "node -e \"require('fs').rmSync(process.cwd(), {recursive: true, force: true})\"",
    // command-rules.ts genericCodeDeletes (languages without a table)
    "matlab -batch \"rmdir(getenv('HOME'), 's')\"",
    "julia -e 'rm(homedir(); recursive=true)'",
    // framework-rules.ts (app consoles)
    "bin/rails runner 'FileUtils.rm_rf(Rails.root)'",
    'php artisan tinker --execute="File::deleteDirectory(base_path())"',
  ]);
  allowsAll(t, [
    "python3 -c \"import shutil, os; shutil.rmtree(os.path.join(os.getcwd(), 'build'))\"",
    "julia -e 'rm(joinpath(pwd(), \"out\"); recursive=true)'",
    "bin/rails runner 'FileUtils.rm_rf(Rails.root.join(\"tmp/cache\"))'",
  ]);
});
