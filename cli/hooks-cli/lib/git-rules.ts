/**
 * Git history and refs kept on a hosting service (GitHub, GitLab, Gitea/Forgejo, Bitbucket, Azure DevOps),
 * reached through its CLI (`gh`, `glab`, `tea`, `hub`) or its REST API (`gh api`, `curl -X DELETE`, httpie):
 * what no local backup brings back. Pure: each rule reads the argv and returns findings; command-rules.ts
 * files them (and keeps the rules that need the line: force-push, branch listings, reflog).
 *
 * One principle per resource, the same whichever client reaches it:
 *   - a repository, an organisation or a group deleted: its history, issues and pull requests are gone;
 *   - a protected branch (main, release/*…) deleted or unprotected;
 *   - a release tag (v1.2.0: a version with no pre-release part) deleted or moved: everything that pins
 *     the release (package managers, Go modules, deploys) breaks or silently gets other code. Pre-release
 *     and test tags (v1.3.0-rc1, v0.0.1-test) are everyday clean-up;
 *   - a deployment environment deleted: its secrets and protection rules go with it.
 */
import type { ServiceFinding } from './service-rules';

export const PROTECTED_BRANCHES = new Set(['main', 'master', 'trunk', 'develop', 'development', 'production', 'prod', 'release', 'stable', 'live', 'default', 'gh-pages']);
/** A default or shared branch: the names above, and the families teams protect (release/2.4, hotfix/x, production/eu). */
export const isProtected = (b: string) => PROTECTED_BRANCHES.has(b.replace(/^refs\/heads\//, '')) || /^(refs\/heads\/)?(release|releases|hotfix|production|prod|stable|main|master|support|maintenance)\/./.test(b);
/**
 * A published release's tag: v1.2.0, 2.4, refs/tags/v1.0.0, a major version (v2, what an action or module pins), or one named
 * for what it records (paper-v1, submission-2.0, dataset-v3) (not v1.3.0-rc1, v0.0.1-test).
 */
export const isReleaseTag = (t: string) => /^(refs\/tags\/)?((paper|release|rel|submission|published|publication|camera-ready|final|thesis|dataset|data|prod|production)[-_/]?)?(v\d+(\.\d+){0,3}|\d+(\.\d+){1,3})$/.test(t);

/** A command that prints the remote's default branch (symbolic-ref of origin/HEAD, remote show's "HEAD branch", the forge's defaultBranchRef). */
export const DEFAULT_BRANCH_QUERY = /\bsymbolic-ref\b.*refs\/remotes\/[^/\s]+\/HEAD|\brev-parse\s+--abbrev-ref\s+[\w.-]+\/HEAD|\bremote\s+show\b.*HEAD branch|\bls-remote\s+--symref\b|defaultBranchRef|default_branch|init\.defaultBranch/;

/** Options of git subcommands whose value is a command line git runs through the shell. */
export const GIT_COMMAND_OPTIONS = new Map<string, RegExp>(Object.entries({
  rebase: /^(-x|--exec)$/,
  difftool: /^(-x|--extcmd)$/,
  clone: /^(-u|--upload-pack)$/,
  fetch: /^--upload-pack$/,
  pull: /^--upload-pack$/,
  'ls-remote': /^--upload-pack$/,
  push: /^(--receive-pack|--exec)$/,
  'send-pack': /^(--receive-pack|--exec)$/,
  archive: /^--exec$/,
  'filter-branch': /^--(tree|index|msg|env|commit|parent|tag-name)-filter$/,
  'send-email': /^--(to-cmd|cc-cmd|header-cmd)$/,
}));

/** A git URL (https://host/…, ssh://git@host/…, git@host:…) on a hosting service: a known forge, or a host named for one (git.acme.io, gitlab.acme.dev). */
export function isForgeUrl(url: string): boolean {
  const host = (/^\w+:\/\/(?:[^/@]*@)?([^/:?#]+)/.exec(url) ?? /^(?:[\w.-]+@)?([\w.-]+):/.exec(url))?.[1]?.toLowerCase() ?? '';
  return /(^|\.)(github\.com|gitlab\.com|bitbucket\.org|codeberg\.org|sr\.ht|dev\.azure\.com|visualstudio\.com|gitee\.com|sourceforge\.net)$|^(git|gitlab|gitea|forgejo|scm|code|bitbucket|github)[.-]|^localhost$/.test(host);
}

const FORGE_CLIS = /^(gh|glab|tea|hub|lab|bb|fj|berg)$/;
const HTTP_CLIENTS = /^(curl|wget|wget2|http|https|xh|xhs|curlie|httpie)$/;
/** A hosting service's API: only these URLs are read as forge resources (an app's own /projects/5 is not). */
const FORGE_API = /^(\w+:\/\/)?([^/]*\.)?(api\.github\.com|github\.[\w.]+\/api\/v3|gitlab\.[\w.]+|api\.bitbucket\.org|codeberg\.org|gitea\.[\w.]+|forgejo\.[\w.]+|dev\.azure\.com)\/|\/api\/v4\/projects\/|\/api\/v1\/repos\//;

/** The HTTP method of an API call: -X DELETE, -XDELETE, --request=DELETE, --method DELETE, httpie's `DELETE URL`. */
export function httpMethod(name: string, args: string[]): string | null {
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (/^(-[a-zA-Z]*X|--request|--method)$/.test(a)) return (args[k + 1] ?? '').toUpperCase();
    const m = /^(?:-[a-zA-Z]*X|--request=|--method=)([A-Za-z]+)$/.exec(a);
    if (m) return m[1].toUpperCase();
  }
  if (/^(http|https|xh|xhs|httpie)$/.test(name)) return args.find((a) => /^[A-Z]+$/.test(a)) ?? null;
  return null;
}

/** What a DELETE of this API path removes, if it is something no backup brings back. */
function deletedResource(url: string): string | null {
  // GitLab names a project GROUP%2FREPO: the repository patterns read the path as written, refs read it decoded.
  const raw = `/${url.replace(/^\w+:\/\/[^/]+/, '').replace(/[?#].*$/, '').replace(/^\/+/, '').replace(/\/+$/, '')}`.replace(/^\/(api\/v\d+|api|rest\/api\/[\d.]+|2\.0)(?=\/)/, '');
  let p = raw;
  try {
    p = decodeURIComponent(raw.replace(/%(?![0-9a-f]{2})/gi, '%25'));
  } catch {
    // keep it as written
  }
  const tag = /\/(?:git\/refs\/tags|repository\/tags|refs\/tags|tags)\/(.+)$/.exec(p)?.[1];
  if (tag !== undefined) return isReleaseTag(tag) ? `the release tag ${tag}` : null;
  const branch = /\/(?:git\/refs\/heads|repository\/branches|refs\/branches|branches|protected_branches|branch_protections)\/(.+?)(?:\/protection)?$/.exec(p)?.[1];
  if (branch !== undefined) return isProtected(branch) || branch.includes('*') ? `the protected branch ${branch} (or its protection)` : null;
  if (/\/environments\/[^/]+$/.test(p)) return `the deployment environment ${p.split('/').pop()} with its secrets and protection rules`;
  if (/\/rulesets\/[^/]+$/.test(p)) return 'a ruleset protecting branches and tags';
  // The repository itself: GitHub/Gitea repos/O/R, GitLab projects/ID, Bitbucket repositories/W/R, Azure _apis/git/repositories/ID,
  // or an organisation or group with every repository in it.
  if (/^\/(repos|repositories)\/[^/]+\/[^/]+$|^\/repos\/[^/]*\$|^\/projects\/[^/]+$|\/_apis\/git\/repositories\/[^/]+$/.test(raw)) return 'the repository with its history, issues and pull requests';
  if (/^\/(orgs|groups|workspaces)\/[^/]+$/.test(raw)) return 'an organisation or group with every repository in it';
  return null;
}

/** Findings for one command that reaches a hosting service. */
export function hostingFindings(argv: string[], fedBy: string[][] | null = null): ServiceFinding[] {
  const [name = '', ...args] = argv;
  const out: ServiceFinding[] = [];
  const forge = FORGE_CLIS.test(name);
  if (!forge && !HTTP_CLIENTS.test(name)) return out;
  const verbs = args.filter((a, k) => !a.startsWith('-') && !/^(-R|--repo|-X|--method|--request|-H|--header|-f|-F|--field|--raw-field|--hostname|-u|--user|-o|--output)$/.test(args[k - 1] ?? ''));
  const say = (level: ServiceFinding['level'], what: string) => out.push({ level, reason: `${name} ${args.slice(0, 4).join(' ')}: ${what}` });
  if (forge && /^(repo|repos|project|projects)$/.test(verbs[0] ?? '') && /^(delete|rm|remove|destroy)$/.test(verbs[1] ?? '')) {
    say('block', 'deletes the repository on the hosting service with its history, issues and pull requests');
    return out;
  }
  if (name === 'hub' && verbs[0] === 'delete') say('block', 'deletes the repository on GitHub with its history, issues and pull requests');
  // gh release delete v2.0.0 --cleanup-tag, glab release delete v2.0.0 --with-tag: the release and its tag.
  if (forge && /^(release|releases)$/.test(verbs[0] ?? '') && /^(delete|rm|remove)$/.test(verbs[1] ?? '')) {
    const tag = verbs[2] ?? '';
    if (isReleaseTag(tag) && args.some((a) => /^--(cleanup-tag|with-tag|delete-tag)$/.test(a))) say('block', `deletes the release ${tag} and its tag: everything that pins ${tag} breaks`);
    else say('warn', `deletes the release ${tag}: its notes and downloads go`);
    return out;
  }
  // gh secret delete NAME (glab keeps its secrets as masked variables): the value cannot be read back, every workflow using it fails.
  if (forge && (/^secrets?$/.test(verbs[0] ?? '') || (name === 'glab' && /^variables?$/.test(verbs[0] ?? ''))) && /^(delete|remove|rm)$/.test(verbs[1] ?? '')) {
    say('block', 'deletes a CI secret on the hosting service: its value cannot be read back');
    return out;
  }
  const api = forge ? verbs[0] === 'api' : true;
  // … | xargs gh run delete, … | xargs -I{} gh api -X DELETE …/actions/artifacts/{}: every CI run or artifact an
  // unfiltered listing prints (one `gh run delete ID`, or a listing narrowed by status, branch, workflow or a select, is clean-up).
  const ciItem = (forge && /^(run|runs|pipeline|pipelines|job|jobs)$/.test(verbs[0] ?? '') && /^(delete|rm|remove)$/.test(verbs[1] ?? '')) || (api && httpMethod(name, args) === 'DELETE' && args.some((a) => /\/(actions\/(artifacts|runs)|pipelines|jobs|deployments)(\/|$)/.test(a)));
  if (ciItem && fedBy !== null && fedBy.length > 0 && !fedBy.some((u) => u.some((a) => /^(--status|-s|--branch|-b|--workflow|-w|--created|--user|-u|--event|-e|--commit|-c|--key|-k|--ref|-r)$|^--(status|branch|workflow|created|user|event|commit|key|ref)=|select\(|\[\]\s*\|\s*select/.test(a)) || /^(grep|rg|awk|sed|head|tail)$/.test(u[0] ?? ''))) {
    say('block', 'deletes every CI run or artifact the listing prints: the project\'s build history and its outputs, for good');
    return out;
  }
  if (!api || httpMethod(name, args) !== 'DELETE') return out;
  const urls = forge ? verbs.slice(1) : args.filter((a) => FORGE_API.test(a));
  const what = urls.map(deletedResource).find((x) => x !== null);
  if (what) say('block', `deletes ${what} on the hosting service through its API`);
  return out;
}

/** Code that drives git through a library rather than the `git` command: GitPython, pygit2, simple-git, isomorphic-git, nodegit, Rugged. */
const GIT_LIBRARY = /\bimport\s+(git|pygit2)\b|\bfrom\s+(git|pygit2)\s+import\b|\bgit\.Repo\b|\bpygit2\b|simple-git|\bsimpleGit\b|isomorphic-git|\bnodegit\b|\bRugged\b|\bgit\.(push|deleteRef|deleteBranch)\s*\(/;

/**
 * The git command lines a library call amounts to, so the git rules judge them as they judge the command:
 * `repo.git.push('origin', 'main', force=True)` is `git push origin main --force`, `references.delete('refs/heads/main')`
 * is `git update-ref -d refs/heads/main`, simple-git's `.push(['--force', 'origin', 'main'])` and isomorphic-git's
 * `git.push({ ref: 'main', force: true })` are pushes. `values(text)` reads the string literals of an argument list.
 */
export function gitLibraryLines(code: string, values: (text: string) => string[]): string[] {
  if (!GIT_LIBRARY.test(code)) return [];
  const out: string[] = [];
  // Python keyword flags (force=True, D=True) and JS object flags ({ force: true }) become options.
  const flags = (args: string) => [...args.matchAll(/\b(\w+)\s*[=:]\s*(?:True|true)\b/g)].map((m) => (m[1].length === 1 ? `-${m[1]}` : `--${m[1].replace(/_/g, '-')}`));
  const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
  const line = (words: string[]) => out.push(words.map((w) => (/^[\w./:+@^~-]+$/.test(w) ? w : quote(w))).join(' '));
  for (const m of code.matchAll(/\.git\.([a-z_]+)\s*\(([^()]*)\)/g)) line(['git', m[1].replace(/_/g, '-'), ...values(m[2]), ...flags(m[2])]);
  for (const m of code.matchAll(/\.raw\s*\(([^()]*)\)/g)) line(['git', ...values(m[1])]);
  for (const m of code.matchAll(/(?<![.\w]git)\.push\s*\(([^()]*)\)/g)) {
    const lits = values(m[1]);
    // isomorphic-git names the parts: { remote: 'origin', ref: 'main', force: true }.
    const named = (key: string) => new RegExp(`\\b${key}\\s*:\\s*(['"])([^'"]+)\\1`).exec(m[1])?.[2];
    const ref = named('ref');
    const words = ref !== undefined ? [named('remote') ?? 'origin', ref] : lits.filter((v) => !v.startsWith('-'));
    // A lone refspec (push('main'), push(['+refs/heads/main'])) goes to the default remote.
    if (words.length === 1 || (words[0] !== undefined && /[:+/]/.test(words[0]))) words.unshift('origin');
    line(['git', 'push', ...lits.filter((v) => v.startsWith('-')), ...flags(m[1]), ...words]);
  }
  for (const m of code.matchAll(/\b(?:references\.delete|delete_reference|deleteRef|deleteRemoteRef)\s*\(([^()]*)\)/g)) {
    const ref = /\bref\s*:\s*(['"])([^'"]+)\1/.exec(m[1])?.[2] ?? values(m[1])[0];
    if (ref) line(['git', 'update-ref', '-d', /^refs\//.test(ref) ? ref : `refs/heads/${ref}`]);
  }
  for (const m of code.matchAll(/\b(?:branches\.delete|delete_head|deleteLocalBranch|deleteBranch)\s*\(([^()]*)\)|\bbranches(?:\.local)?\[\s*(['"])([^'"]+)\2\s*\]\.delete\s*\(/g)) {
    const name = m[3] ?? /\bref\s*:\s*(['"])([^'"]+)\1/.exec(m[1] ?? '')?.[2] ?? values(m[1] ?? '')[0];
    if (name) line(['git', 'branch', '-D', name]);
  }
  return out;
}

/**
 * What a command writes to stdout when that is the whole repository or project: `git bundle create - …`, `git archive`,
 * `git fast-export --all`, `tar c` or `zip -r -` of the project or its `.git`. `inProject(path)` says whether an operand names
 * the project (or an ancestor of it) or something inside its `.git`.
 */
export function repositoryStream(argv: string[], inProject: (operand: string) => boolean): string | null {
  const [name, ...args] = argv;
  if (name === 'git') {
    const sub = args.find((a, k) => !a.startsWith('-') && !/^-[cC]$/.test(args[k - 1] ?? ''));
    const rest = args.slice(args.indexOf(sub ?? '') + 1);
    if (sub === 'bundle' && rest[0] === 'create' && rest[1] === '-') return 'git bundle create -';
    if (sub === 'archive' && !rest.some((a) => /^(-o|--output(=.*)?|--remote(=.*)?|-l|--list)$/.test(a))) return 'git archive';
    if (sub === 'fast-export' && rest.some((a) => a === '--all' || !a.startsWith('-'))) return 'git fast-export';
    return null;
  }
  const ops = args.filter((a) => a === '-' || !a.startsWith('-'));
  // tar cz DIR (old-style letters first), tar -czf - DIR; zip -r - DIR.
  const tarStdout = name === 'tar' && /^-?[a-zA-Z]*c/.test(args[0] ?? '') && !args.some((a, k) => /^-?[a-zA-Z]*f$/.test(a) && args[k + 1] !== '-');
  const toStdout = tarStdout || (name === 'zip' && ops[0] === '-');
  const sources = ops.filter((o, k) => o !== '-' && !(k === 0 && name === 'tar' && o === args[0]));
  const whole = sources.some((o) => o === '.' || /(^|\/)\.git$/.test(o) || inProject(o));
  return toStdout && whole ? `${name} of the project` : null;
}

/** A sender that uploads what it reads on stdin: nc, socat, httpie, or curl/wget given `-` or /dev/stdin as the body or file. */
export function readsStdinToSend(argv: string[]): boolean {
  const [name, ...args] = argv;
  if (/^(nc|ncat|netcat|socat|telnet|http|https|xh|xhs)$/.test(name ?? '')) return true;
  if (!/^(curl|wget|wget2)$/.test(name ?? '')) return false;
  return args.some((a, k) => /^(@-|[\w-]*=@-|-|\.|\/dev\/stdin)$/.test(a) && (/^(-[a-zA-Z]*T|--upload-file|--post-file|--body-file)$/.test(args[k - 1] ?? '') || a.includes('@'))) || args.some((a) => /^--(post|body)-file=(-|\/dev\/stdin)$/.test(a));
}
