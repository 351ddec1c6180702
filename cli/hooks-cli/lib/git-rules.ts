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
/** A published release's tag: v1.2.0, 2.4, refs/tags/v1.0.0 (not v1.3.0-rc1, v0.0.1-test). */
export const isReleaseTag = (t: string) => /^(refs\/tags\/)?v?\d+(\.\d+){1,3}$/.test(t);

const FORGE_CLIS = /^(gh|glab|tea|hub|lab|bb|fj|berg)$/;
const HTTP_CLIENTS = /^(curl|wget|wget2|http|https|xh|xhs|curlie|httpie)$/;
/** A hosting service's API: only these URLs are read as forge resources (an app's own /projects/5 is not). */
const FORGE_API = /^(\w+:\/\/)?([^/]*\.)?(api\.github\.com|github\.[\w.]+\/api\/v3|gitlab\.[\w.]+|api\.bitbucket\.org|codeberg\.org|gitea\.[\w.]+|forgejo\.[\w.]+|dev\.azure\.com)\/|\/api\/v4\/projects\/|\/api\/v1\/repos\//;

/** The HTTP method of an API call: -X DELETE, -XDELETE, --request=DELETE, --method DELETE, httpie's `DELETE URL`. */
export function httpMethod(name: string, args: string[]): string | null {
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (/^(-X|--request|--method)$/.test(a)) return (args[k + 1] ?? '').toUpperCase();
    const m = /^(?:-X|--request=|--method=)([A-Za-z]+)$/.exec(a);
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
export function hostingFindings(argv: string[]): ServiceFinding[] {
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
  const api = forge ? verbs[0] === 'api' : true;
  if (!api || httpMethod(name, args) !== 'DELETE') return out;
  const urls = forge ? verbs.slice(1) : args.filter((a) => FORGE_API.test(a));
  const what = urls.map(deletedResource).find((x) => x !== null);
  if (what) say('block', `deletes ${what} on the hosting service through its API`);
  return out;
}
