/**
 * The places code names by expression rather than by path: the user's home directory
 * (`os.path.expanduser('~')`, `System.getProperty("user.home")`), the working directory (`os.getcwd()`,
 * `pwd()`) and the project an app framework runs in (`base_path()`, `Rails.root`). One table, read by
 * the three readers of code:
 *
 *   inline-code.ts       scripts (python, perl, ruby, js, php, lua, awk, r)     family 'script'
 *   command-rules.ts     languages without a table (go, JVM, swift, c#, rust,   family 'compiled'
 *                        julia, MATLAB, tcl, elixir, raku...: genericCodeDeletes)
 *   framework-rules.ts   app consoles (Laravel, WordPress, Rails)               families 'php-app', 'ruby-app'
 *
 * Each row rewrites its expression into a string literal the readers already understand: the home as
 * "~", the working directory as ".", the project (where the console runs) as "." or "./DIR". Rows of a
 * family apply in table order (a longer spelling before the shorter one it contains).
 */
export type Place = 'home' | 'cwd' | 'project';
export type CodeFamily = 'script' | 'compiled' | 'php-app' | 'ruby-app';

interface PlaceRow {
  family: CodeFamily;
  place: Place;
  expr: RegExp;
  /** The literal put in its place, when not the place's own ("~" or "."): a project subdirectory, a path kept. */
  to?: string | ((...m: string[]) => string);
}

const LITERAL: Record<Place, string> = { home: '"~"', cwd: '"."', project: '"."' };

const home = (family: CodeFamily, ...exprs: RegExp[]): PlaceRow[] => exprs.map((expr) => ({ family, place: 'home' as const, expr }));
const cwd = (family: CodeFamily, ...exprs: RegExp[]): PlaceRow[] => exprs.map((expr) => ({ family, place: 'cwd' as const, expr }));

/** The home directory in JVM languages and Apple's: System.getProperty("user.home"), scala's sys.props("user.home"), NSHomeDirectory(). */
export const JVM_HOME = /\bSystem\.getProperty\(\s*['"]user\.home['"]\s*\)|\bNSHomeDirectory\(\)|\bsys\.props\(\s*"user\.home"\s*\)|\bsys\.props\.get\(\s*"user\.home"\s*\)\.get|\b(?:scala\.util\.)?Properties\.userHome\b|\bsys\.env\(\s*"HOME"\s*\)/g;

export const CODE_PLACES: PlaceRow[] = [
  // Scripts: the home.
  ...home('script',
    /(?:os\.path\.)?\bexpanduser\(\s*(['"])~\/?\1\s*\)/g,
    // The user's entry in the password database: (getpwuid($<))[7], pwd.getpwuid(os.getuid()).pw_dir, Etc.getpwuid.dir...
    /\(\s*getpwuid\s*\(?\s*\$<\s*\)?\s*\)\s*\[\s*7\s*\]|\bpwd\.getpwuid\([^)]*\)\)?(?:\.pw_dir|\[5\])|\bEtc\.getpwuid(?:\([^)]*\))?\.dir|\bposix_getpwuid\([^)]*\)\)?\s*\[\s*['"]dir['"]\s*\]|(?:require\(\s*['"](?:node:)?os['"]\s*\)|\bos)\.userInfo\(\)\.homedir|\bENV\.fetch\(\s*['"]HOME['"][^)]*\)/g,
    /(?:pathlib\.)?Path\.home\(\)/g,
    /os\.environ\s*\[\s*(['"])HOME\1\s*\]/g,
    /os\.environ\.get\(\s*(['"])HOME\1\s*(?:,[^)]*)?\)/g,
    /os\.getenv\(\s*(['"])HOME\1\s*(?:,[^)]*)?\)/g,
    /(?:require\(\s*(['"])(?:node:)?os\1\s*\)|\bos)\.homedir\(\)/g,
    /process\.env\.HOME\b/g,
    /process\.env\[\s*(['"])HOME\1\s*\]/g,
    /\$ENV\{\s*(['"]?)HOME\1\s*\}/g,
    /\bDir\.home\b/g,
    /\bENV\s*\[\s*(['"])HOME\1\s*\]/g,
    /File\.expand_path\(\s*(['"])~\1\s*\)/g,
    /(?:\bSys\.)?\bgetenv\(\s*(['"])HOME\1\s*\)/g,
    /os\.getenv\(\s*(['"])HOME\1\s*\)/g,
    /Deno\.env\.get\(\s*(['"])HOME\1\s*\)/g,
    /\bENVIRON\s*\[\s*(['"])HOME\1\s*\]/g,
    /\$_(?:SERVER|ENV)\s*\[\s*(['"])HOME\1\s*\]/g,
    /System\.user_home!?\(\)/g,
    /System\.getProperty\(\s*(['"])user\.home\1\s*\)/g,
    /\bBun\.env\.HOME\b/g,
    /\bhomedir\(\)/g,
  ),
  // Scripts: the working directory.
  ...cwd('script',
    /os\.getcwd\(\)/g, /(?:pathlib\.)?Path\.cwd\(\)/g, /process\.cwd\(\)/g, /\bDir\.pwd\b/g, /\bgetcwd\(\)/g, /Deno\.cwd\(\)/g,
    // The script's own directory: for code given inline or on stdin (node -e, node <<EOF), the working directory.
    /\b__dirname\b/g, /\b__DIR__\b/g, /\b__dir__\b/g,
    // $PWD and the project directory read from the environment (the hook runs in the project).
    /\$ENV\{\s*(['"]?)(PWD|CLAUDE_PROJECT_DIR)\1\s*\}/g, /process\.env(?:\.(?:PWD|CLAUDE_PROJECT_DIR)\b|\[\s*(['"])(?:PWD|CLAUDE_PROJECT_DIR)\1\s*\])/g,
    /os\.environ(?:\.get\(\s*|\s*\[\s*)(['"])(?:PWD|CLAUDE_PROJECT_DIR)\1\s*[)\]]/g, /os\.getenv\(\s*(['"])(?:PWD|CLAUDE_PROJECT_DIR)\1\s*\)/g,
    /\bENV\s*\[\s*(['"])(?:PWD|CLAUDE_PROJECT_DIR)\1\s*\]/g, /\bgetenv\(\s*(['"])(?:PWD|CLAUDE_PROJECT_DIR)\1\s*\)/g,
  ),
  // Languages without a table: the home (Go, C#, Rust, Swift, julia, MATLAB's getenv('HOME'), R's Sys.getenv, tcl's $env(HOME)), then the JVM's.
  ...home('compiled',
    /\bgetenv\(\s*'HOME'\s*\)|\bNSHomeDirectory\(\)|\bhomedir\(\)|os\.Getenv\(\s*"HOME"\s*\)|os\.UserHomeDir\(\)|System\.getProperty\(\s*"user\.home"\s*\)|System\.getenv\(\s*"HOME"\s*\)|Sys\.getenv\(\s*"HOME"\s*\)|ENV\[\s*"HOME"\s*\]|Environment\.GetFolderPath\([^)]*UserProfile\)|std::env::var\(\s*"HOME"\s*\)[^,);]*|dirs::home_dir\(\)[^,);]*|FileManager\.default\.homeDirectoryForCurrentUser[^,);]*|(?:\$\.)?NSHomeDirectory\(\)|\$(?:::)?env\(HOME\)/g,
    JVM_HOME,
  ),
  ...cwd('compiled', /\bpwd\(\)|os\.Getwd\(\)|System\.getProperty\(\s*"user\.dir"\s*\)|sys\.props\(\s*"user\.dir"\s*\)|Directory\.GetCurrentDirectory\(\)/g),
  // App consoles: the framework's names for the project's directories (the console runs in the project).
  { family: 'php-app', place: 'project', expr: /\bbase_path\(\s*\)/g },
  { family: 'php-app', place: 'project', expr: /\b(storage|public|app|database|resource|config)_path\(\s*\)/g, to: (_m, d) => `"./${d === 'resource' ? 'resources' : d}"` },
  { family: 'php-app', place: 'project', expr: /\b(base|storage|public|app)_path\(\s*(['"])([^'"]*)\2\s*\)/g, to: (_m, d, _q, p) => `"${d === 'base' ? '.' : `./${d}`}/${p}"` },
  { family: 'php-app', place: 'project', expr: /(?<![\w$'"])ABSPATH\b/g, to: '"./"' },
  { family: 'php-app', place: 'project', expr: /(?<![\w$'"])WP_CONTENT_DIR\b/g, to: '"./wp-content"' },
  { family: 'ruby-app', place: 'project', expr: /\bRails\.root\.join\(\s*(['"])([^'"]*)\1\s*\)/g, to: '"./$2"' },
  { family: 'ruby-app', place: 'project', expr: /\bRails\.root\b(?:\.to_s)?/g },
  { family: 'ruby-app', place: 'project', expr: /\bRails\.public_path\b/g, to: '"./public"' },
];

/** The family's rows, in table order (built once per family). */
const byFamily = new Map<CodeFamily, PlaceRow[]>();

/** The code with every expression of the family that names the home, the working directory or the project put as its literal. */
export function placesIn(family: CodeFamily, code: string): string {
  let rows = byFamily.get(family);
  if (!rows) byFamily.set(family, (rows = CODE_PLACES.filter((r) => r.family === family)));
  let out = code;
  for (const r of rows) {
    const to = r.to ?? LITERAL[r.place];
    out = typeof to === 'string' ? out.replace(r.expr, to) : out.replace(r.expr, to as (...m: string[]) => string);
  }
  return out;
}
