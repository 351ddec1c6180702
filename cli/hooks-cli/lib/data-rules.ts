/**
 * Data rules: what a data scientist or ML engineer on a shared machine loses that is neither the
 * project's nor a cache. Shared data mounts (/scratch, /data, /mnt/NAME...) beyond the user's own
 * area in them, the data directories of the home (~/data, ~/checkpoints: see isPreciousHomeDir),
 * system-wide installs every user's jobs run on (/usr/local/cuda*, the GPU driver packages), other
 * users' processes and jobs killed as root, remote buckets, registries and data stores emptied from
 * their CLIs and SDKs, and the history of LFS and DVC rewritten.
 *
 * Pure functions over paths and argv; command-rules.ts calls them where it judges deletes, writes and
 * invocations, and turns what they return (a reason, or null) into a finding.
 */
import { groupAreaLoss } from './cluster-rules';
import { HOME_DATA_DIRS, isUnder, SHARED_MOUNT, type PathEnv, windowsView } from './paths-classify';
import { shellWord } from './shell-parse';
import { storeScope } from './sql-rules';

/** A path segment that is the user's own name: $USER, ${LOGNAME}, or the home directory's name. */
function isOwnName(seg: string, env: PathEnv): boolean {
  if (/^\$\{?(USER|LOGNAME|USERNAME)\}?$/.test(seg)) return true;
  const m = /^\/(?:home|Users)\/([^/]+)$/.exec(env.home);
  return m !== null && m[1] === seg;
}

/**
 * A recursive delete (or an emptying of everything in it, `wholeDir`) of a shared data mount, or of a
 * whole area right in it that is not the user's own (/scratch/bob, /mnt/datasets/imagenet): every
 * user's data, another user's, or a dataset the whole group reads. Deeper paths, and anything under
 * the user's own area (/scratch/$USER/runs/x), are ordinary clean-up. Returns what is lost, or null.
 */
export function sharedMountLoss(abs: string, env: PathEnv): string | null {
  if (isUnder(env.project, abs)) return null;
  const group = groupAreaLoss(abs);
  if (group) return group;
  const m = SHARED_MOUNT.exec(abs);
  if (!m) return null;
  const rest = abs.slice(m[0].length).split('/').filter((s) => s !== '');
  if (rest.length === 0) return `the shared data mount ${m[0]}: every user's data on it`;
  if (isOwnArea(abs, env)) return `${abs}, the user's whole area of the shared mount ${m[0]}: every run, dataset and checkpoint kept there`;
  // `…` stands for what a filter selected there (find /scratch -name '*.tmp'): not a whole area.
  // /mnt/rootfs/tmp/*: a mounted image's temporary or cache directory holds nobody's data.
  // (Nor a cache shared by a team, remade by its tools: /mnt/ddc/DerivedDataCache, /data/pip-cache.)
  if (rest.length === 1 && rest[0] !== '…' && !isOwnName(rest[0], env) && !/^(tmp|temp|\.?cache|[\w.-]*[-_]cache|ddc|deriveddatacache|shadercache)$/i.test(rest[0])) return `${abs}, a whole area of the shared data mount ${m[0]} (another user's, or a dataset the group reads)`;
  return null;
}

/** The user's own area of a shared mount, itself (/scratch/$USER, /work/mjones). */
export function isOwnArea(abs: string, env: PathEnv): boolean {
  const m = SHARED_MOUNT.exec(abs);
  const rest = m ? abs.slice(m[0].length).split('/').filter((s) => s !== '') : [];
  return rest.length === 1 && isOwnName(rest[0], env);
}

/** A file under a shared data mount outside the user's own area there. */
function inSharedData(abs: string, env: PathEnv): boolean {
  const m = SHARED_MOUNT.exec(abs);
  if (!m || isUnder(abs, env.project)) return false;
  const first = abs.slice(m[0].length).split('/').filter((s) => s !== '')[0];
  return first === undefined || !isOwnName(first, env);
}


/**
 * A data file destroyed in place (truncate -s 0, shred, `: >`, open(…, 'w')): a file of a shared
 * data mount outside the user's own area, or of a data directory of the home. Logs are not data.
 */
export function dataFileEmptied(abs: string, env: PathEnv): string | null {
  if (/\.(log|out|err)$/.test(abs)) return null;
  if (inSharedData(abs, env)) return `${abs}, data on a shared mount`;
  // In the home, or a Windows profile read as one (its Documents, OneDrive: the user's own files too).
  const { p, env: e } = windowsView(abs, env);
  const rel = isUnder(p, e.home) && !isUnder(p, env.project) ? p.slice(e.home.length + 1) : '';
  const top = rel.split('/')[0];
  return HOME_DATA_DIRS.includes(top) || (e.home !== env.home && /^(Documents|Desktop|Pictures|Videos|Music|OneDrive)$/.test(top)) ? `${abs}, the user's data kept in the home directory` : null;
}

/** The root of a shared data mount, where only names (or the user's own files, -user $USER) narrow a listing. */
export function isSharedMountRoot(abs: string | null, argv: string[] = []): boolean {
  if (abs === null || SHARED_MOUNT.exec(abs)?.[0] !== abs) return false;
  return !argv.some((a, k) => /^-(user|uid)$/.test(argv[k - 1] ?? '') && /^\$\{?(USER|LOGNAME)\}?$|^\$\(…\)$/.test(a) && !/^(!|-not)$/.test(argv[k - 2] ?? ''));
}

/**
 * A recursive delete of /usr/local/NAME (or a glob there): a system-wide install every user's jobs
 * run on (/usr/local/cuda-12.1, /usr/local/cuda*). Not when the same line puts a new one in its place
 * (Go's documented upgrade: rm -rf /usr/local/go && tar -C /usr/local -xzf go….tar.gz).
 */
export function systemInstallLoss(abs: string, lineOf: () => string[][]): string | null {
  // (Also every global package of the language installed there: /usr/local/lib/node_modules, /usr/local/lib/python3.12/site-packages.)
  if (!/^\/usr\/local\/([^/]+|lib\/node_modules|lib\/python[\d.]+(\/(site|dist)-packages)?)$/.test(abs)) return null;
  const line = lineOf();
  const reinstalls = line.some((a) => (/^(tar|bsdtar|unzip)$/.test(a[0]) && a.some((x, k) => /^\/usr\/local\/?$/.test(x) && /^(-C|--directory|-d)$/.test(a[k - 1] ?? ''))) || (/^(mv|cp|install|ln)$/.test(a[0]) && /^\/usr\/local\//.test(a[a.length - 1] ?? '')) || /\.run$|^make$|^dpkg$|^(apt|apt-get|dnf|yum)$/.test(a[0] === 'sh' || a[0] === 'bash' ? a[1] ?? '' : a[0]));
  return reinstalls ? null : `${abs}, a system-wide install every user's jobs run on`;
}

/** The GPU driver and toolkit packages: removed, every GPU job on the machine stops (the container toolkit aside). */
const GPU_STACK = /^['"]?\^?(\*|\.\*)?(lib)?(nvidia|cuda|cudnn|nccl)(?!-container|-docker)/;

/** The processes users run on a shared box: interpreters, notebooks, launchers of training. */
const WORKLOADS = /^(python[\d.]*|ipython|jupyter.*|java|node|R|Rscript|julia|matlab|torchrun|deepspeed|accelerate|ray|tensorboard|mpirun|srun)$/;

/** -u/--user VALUE (or --user=VALUE) in argv: the user named, or undefined. */
function userOpt(argv: string[]): string | undefined {
  for (let k = 1; k < argv.length; k++) {
    if (/^(-u|-U|--user|--uid|--euid)$/.test(argv[k])) return argv[k + 1];
    const m = /^(?:--user|--uid|--euid)=(.*)$|^-u(.+)$/.exec(argv[k]);
    if (m) return m[1] ?? m[2];
  }
  return undefined;
}

const isSelf = (u: string, env: PathEnv) => /^\$\{?(USER|LOGNAME)\}?$|^\$\(…\)$|^\$\((whoami|id -un)\)$/.test(u) || isOwnName(u, env);

/** What a lister feeding kill prints: every user's processes or jobs (nvidia-smi, ps -e, pgrep/squeue without -u self, lsof, fuser). */
function listsOthers(cmd: string, env: PathEnv): boolean {
  const a = cmd.trim().split(/\s+/);
  const u = userOpt(a);
  if (u !== undefined && isSelf(u.replace(/^["']|["']$/g, ''), env)) return false;
  if (/\|\s*(grep|awk|rg)\b[^|]*\$\{?(USER|LOGNAME)\b/.test(cmd) && !/!=\s*"?'?\$\{?USER|\$\{?USER\}?'?"?\s*!=|-v[^|]*\$\{?USER/.test(cmd)) return false;
  return /^(nvidia-smi|lsof|fuser|squeue|qstat|bjobs)$/.test(a[0]) || (a[0] === 'ps' && /^(-[a-zA-Z]*[eA]|a?u?x|aux)/.test(a[1] ?? '')) || (a[0] === 'pgrep' && u !== undefined) || (a[0] === 'pgrep' && a.slice(1).some((x) => WORKLOADS.test(x.replace(/^["']|["']$/g, ''))));
}

/** Commands dataToolFindings judges: a cheap gate before it. */
export const isDataTool = (name: string): boolean => /^(dvc|jupyter|jupyter-lab|jupyter-notebook|jupyter-server|code-server|chmod|chown|chgrp|setfacl|kill|pkill|killall|skill|fuser|scancel|qdel|bkill|apt|apt-get|aptitude|dnf|yum|zypper|pacman|aws|gsutil|gcloud|s5cmd|azcopy|b2|rclone|mc|s3cmd|oci|hf|huggingface-cli|kaggle|modal|skopeo|crane|regctl)$/.test(name);

/** The invocation as data-rules needs it. */
export interface DataInvocation {
  argv: string[];
  elevated: boolean;
  /** Command substitutions in its words. */
  subs: string[];
  /** The argv of the pipeline stages before it, first to last. */
  upstream: string[][];
  viaXargs: boolean;
}

/**
 * Invocations that destroy data or others' work: processes and jobs of other users killed as root, the GPU
 * stack removed, remote buckets emptied, model and dataset registries deleted, data history rewritten.
 * Returns the reasons to refuse (none when it is ordinary).
 */
export function dataToolFindings(inv: DataInvocation, env: PathEnv, line: string[][]): string[] {
  const [name, ...args] = inv.argv;
  const out: string[] = [];
  if (name === undefined) return out;
  // Processes and jobs of other users, killed as root.
  // (A reload or status signal, -HUP, -USR1, -0, ends nothing.)
  const reload = inv.argv.some((a, k) => /^-(HUP|SIGHUP|USR[12]|SIGUSR[12]|CONT|WINCH|0|1|10|12)$/i.test(a) || (/^(-s|--signal)$/.test(inv.argv[k - 1] ?? '') && /^(HUP|SIGHUP|USR[12]|SIGUSR[12]|CONT|WINCH|0|1)$/i.test(a)));
  if (inv.elevated && !reload && /^(kill|pkill|killall|skill|fuser|scancel|qdel|bkill)$/.test(name)) {
    const u = userOpt(inv.argv);
    const pattern = args.filter((x, k) => !x.startsWith('-') && !/^(-u|-U|--user|-s|--signal|-n|-p|--partition|-A|--account|-t|--state|-g|-G|-P)$/.test(args[k - 1] ?? ''));
    const fed = [...inv.subs, ...(inv.viaXargs ? [inv.upstream.map((a) => a.join(' ')).join(' | ')] : [])];
    if (u !== undefined && !isSelf(u, env)) out.push(`${name} as root of ${u === 'all' ? 'every user' : `the user ${u}`}'s processes or jobs: other people's work is killed`);
    else if (name === 'fuser' && args.some((x) => /^-[a-zA-Z]*k/.test(x))) out.push(`fuser -k as root kills every process using ${pattern.join(' ')}, other users' too`);
    else if (/^(pkill|killall|skill)$/.test(name) && u === undefined && pattern.some((p) => WORKLOADS.test(p.replace(/^\W+|\W+$/g, '').split(/\s/)[0]) || /^(python|jupyter|java|node)/.test(p))) out.push(`${name} as root of ${pattern.join(' ')}: every user's ${pattern[0]} processes are killed, not only yours`);
    else if (/^(scancel|qdel|bkill)$/.test(name) && u === undefined && (args.some((x) => /^(-p|--partition|-A|--account|-t|--state|--nodelist|-w)(=|$)/.test(x)) || args.includes('all') || pattern.length === 0)) out.push(`${name} as root of every job that matches ${args.join(' ')}: other users' jobs are cancelled`);
    else if (fed.some((c) => listsOthers(c, env))) out.push(`${name} as root of what \`${fed.find((c) => listsOthers(c, env))!.trim().slice(0, 80)}\` lists: other users' processes or jobs are killed`);
  }
  // The GPU driver or toolkit packages removed, with no new one installed on the line.
  if (/^(apt|apt-get|aptitude|dnf|yum|zypper|pacman)$/.test(name) && args.some((x) => /^(remove|purge|erase|autoremove|-R\w*)$/.test(x))) {
    const gone = args.filter((x) => GPU_STACK.test(x));
    const reinstalled = line.some((a) => /^(apt|apt-get|dnf|yum|zypper|pacman)$/.test(a[0]) && a.includes('install') && a.some((x) => /^(nvidia|cuda)/.test(x))) || line.some((a) => a.some((x) => /^(cuda|NVIDIA)[\w.-]*\.run$/.test(x)));
    // Without -y the package manager lists what goes and asks first.
    const unattended = args.some((x) => /^(-y|--yes|--assume-yes|--noconfirm|--non-interactive|-[a-zA-Z]*y[a-zA-Z]*)$/.test(x));
    if (gone.length > 0 && !reinstalled && unattended) out.push(`${name} removes the GPU driver or toolkit (${gone.join(' ')}): every GPU job on the machine stops`);
  }
  // A shared data mount (or a whole area of it) locked: access taken from the group, or the tree taken over.
  if (/^(chmod|chown|chgrp|setfacl)$/.test(name) && args.some((x) => /^-[a-zA-Z]*R|^--recursive$/.test(x))) {
    const mode = args.find((x) => !x.startsWith('-') || /^-[rwxXst]+$/.test(x)) ?? '';
    const takes = name === 'chown' || name === 'chgrp' || (name === 'setfacl' && args.some((x) => /^-[a-zA-Z]*[bkx]|^--(remove-all|remove-default|remove)/.test(x))) || (name === 'chmod' && (/^[0-7]{3,4}$/.test(mode) ? mode[mode.length - 2] === '0' : /(^|,)[ugoa]*[ga][ugoa]*(-[wxXst]*r|=[wxX]*(,|$))/.test(mode)));
    // chgrp -R smithlab /project/smithlab/new_data: the tree given to the group whose area it is takes nothing.
    const toOwnGroup = (x: string) => name === 'chgrp' && x.split('/').includes(mode);
    const hit = takes ? args.map((x) => (toOwnGroup(x) ? null : sharedMountLoss(x, env))).find((x) => x !== null) : null;
    if (hit) out.push(`${name} -R ${mode} locks ${hit}: the others who use it lose access`);
  }
  // Jupyter or code-server on every interface with no token or password: a shell for anyone who reaches the port.
  if (/^(jupyter|jupyter-lab|jupyter-notebook|jupyter-server|code-server)$/.test(name)) {
    const open = args.some((x, k) => /^--(ip|ServerApp\.ip|NotebookApp\.ip|bind-addr|host)=(0\.0\.0\.0|\*|::|'\*')(:\d+)?$/.test(x) || (/^--(ip|bind-addr|host)$/.test(args[k - 1] ?? '') && /^(0\.0\.0\.0|\*|::)(:\d+)?$/.test(x)));
    const noAuth = args.some((x, k) => /^--(ServerApp|NotebookApp|IdentityProvider)\.(token|password)=$/.test(x) || x === '--no-token' || (x === '--auth' && args[k + 1] === 'none') || x === '--auth=none');
    if (open && noAuth) out.push(`${name} listens on every interface with no token or password: anyone who reaches the port runs code as the user and reads their files and keys`);
  }
  // DVC's remote storage collected, or DVC torn out of the repository, without asking.
  if (name === 'dvc' && args.some((x) => /^(-f|--force)$/.test(x))) {
    if (args[0] === 'gc' && args.some((x) => /^(-c|--cloud|-[a-zA-Z]*c[a-zA-Z]*)$/.test(x))) out.push('dvc gc --cloud --force deletes from the remote storage every data version the kept commits do not use: old datasets and models, for good');
    if (args[0] === 'destroy') out.push('dvc destroy -f removes DVC from the repository with its cache: the data it tracked is only where a remote still holds it');
  }
  // git lfs migrate over every ref: the history of every branch and tag is rewritten.
  if (name === 'git' && args.includes('lfs') && args.includes('migrate') && /^(import|export)$/.test(args[args.indexOf('migrate') + 1] ?? '') && args.includes('--everything')) {
    out.push(`git lfs migrate ${args[args.indexOf('migrate') + 1]} --everything rewrites every commit of every branch and tag: every commit id changes`);
  }
  // locate '*.safetensors' | xargs rm: every model or data file of that kind on the machine, every user's.
  const located = inv.viaXargs ? inv.upstream.find((a) => /^(locate|mlocate|plocate|slocate)$/.test(a[0]))?.slice(1).find((x) => DATA_FILE_GLOB.test(x.replace(/^['"]|['"]$/g, ''))) : undefined;
  if (located && /^(rm|shred|srm|unlink|truncate)$/.test(name)) out.push(`${name} of every ${located} file locate finds: the models and data of every user on the machine`);
  const store = objectStoreWipe(inv.argv);
  if (store) out.push(store);
  const registry = registryDelete(inv.argv);
  if (registry) out.push(registry);
  return out;
}

/** An object-store location: how many fixed path segments follow the bucket, and whether a wildcard ends it. */
function storeUrl(a: string, rclone: boolean): { depth: number; wild: boolean } | null {
  const m = /^(?:s3|s3a|gs|az|abfss?|wasbs?|b2|r2|oss|cos|swift|minio):\/\/[^/]+\/?(.*)$/.exec(a) ?? /^https:\/\/[\w-]+\.(?:blob|dfs|file)\.core\.windows\.net\/[^/?]+\/?([^?]*)/.exec(a) ?? (rclone ? /^:?[\w-]+:(?!\/\/)[^/]*\/?(.*)$/.exec(a) : null);
  if (!m) return null;
  const segs = m[1].split('/').filter((s) => s !== '');
  const w = segs.findIndex((s) => /[*?[]/.test(s));
  if (w >= 0 && !/^\*+$/.test(segs[w])) return { depth: w + 1, wild: true };
  return { depth: w >= 0 ? w : segs.length, wild: w >= 0 };
}

/** A site's built output: synced with delete to a bucket, that is a deploy. */
const SITE_BUILD = /^\.?\/?(dist|build|public|out|_site|site|www|html|static|storybook-static|docs\/_build(\/html)?|\.vitepress\/dist)\/?$/;

/**
 * A bucket, or a top-level prefix of it, emptied: recursive or wildcard deletes by the storage CLIs,
 * and syncs that delete what the source lacks when the source is not a site's build output (an empty
 * directory, a run's outputs). Prefixes two levels down are a scoped clean-up, as for aws s3 rm.
 */
function objectStoreWipe(argv: string[]): string | null {
  const name = argv[0];
  if (!/^(aws|gsutil|gcloud|s5cmd|azcopy|b2|rclone|mc|s3cmd|oci)$/.test(name)) return null;
  const verbs = argv.slice(1).filter((x) => !x.startsWith('-'));
  const urls = argv.slice(1).map((x) => ({ x, u: storeUrl(x, name === 'rclone') })).filter((e) => e.u !== null) as { x: string; u: { depth: number; wild: boolean } }[];
  const last = urls[urls.length - 1];
  if (!last) return null;
  const recursive = argv.some((x) => /^(-[a-zA-Z]*[rR]|--recursive(=true)?|-a|--all-versions|--versions)$/.test(x));
  const dry = argv.some((x) => /^(-n|--dry-?run|--dryrun)$/.test(x));
  if (dry) return null;
  const rm = verbs.slice(0, 3).some((v) => /^(rm|del|delete|rb|remove)$/.test(v));
  // A top-level prefix of a bucket named as throwaway (gs://acme-tmp/$USER/**) is the user's scratch: not the bucket's data.
  if (rm && name !== 'aws' && urls.some((e) => (recursive || e.u.wild) && (e.u.depth === 0 || (e.u.depth === 1 && storeScope([e.x]) !== 'throwaway')))) return `${argv.slice(0, 3).join(' ')} deletes everything in ${urls[0].x}: the bucket's data, for good`;
  const sync = verbs.slice(0, 3).some((v) => /^(sync|rsync)$/.test(v));
  const deletes = name === 'rclone' || argv.some((x) => /^(--delete|-d|--delete-unmatched-destination-objects|--delete-destination(=true)?|--delete-dst|-[a-zA-Z]*d[a-zA-Z]*)$/.test(x) && !(name === 'aws' && x === '-d'));
  if (sync && deletes && urls.length === 1 && last.u.depth <= 1 && argv.indexOf(last.x) > argv.findIndex((x) => /^(sync|rsync)$/.test(x)) + 1) {
    const src = argv[argv.indexOf(last.x) - 1];
    if (!SITE_BUILD.test(src)) return `${name} ${verbs[0] === 'storage' ? 'storage rsync' : 'sync'} with delete makes ${last.x} a copy of ${src}: everything else in the bucket is deleted`;
  }
  return null;
}

/** Model, dataset and notebook registries deleted from their CLIs: Hugging Face repos, Kaggle datasets, Modal volumes, registry images. */
function registryDelete(argv: string[]): string | null {
  const [name, a1, a2, a3] = argv;
  if (/^(hf|huggingface-cli)$/.test(name) && /^(repo|repos)$/.test(a1 ?? '') && a2 === 'delete') return `${name} repo delete removes the repository ${a3 ?? ''} from the Hugging Face Hub with its files and history`;
  if (name === 'kaggle' && /^(datasets|kernels|models|d|k|m)$/.test(a1 ?? '') && (a2 === 'delete' || (a2 === 'instances' && a3 === 'delete'))) return `kaggle ${a1} delete removes ${argv.slice(3).find((x) => !x.startsWith('-')) ?? 'it'} from Kaggle`;
  if (name === 'modal' && a1 === 'volume' && /^(delete|rm)$/.test(a2 ?? '') && (a2 === 'delete' || argv.some((x) => /^(-r|--recursive)$/.test(x)))) return `modal volume ${a2} deletes a remote volume's data`;
  if (/^(skopeo|crane|regctl)$/.test(name) && argv.slice(1, 3).includes('delete')) return `${name} delete removes an image from its registry`;
  return null;
}

/** ML tools that upload files or directories they are given: Hugging Face, Weights & Biases, Kaggle, MLflow, Modal, DVC. */
export function mlUploads(argv: string[]): boolean {
  const [name, a1, a2] = argv;
  if (/^(hf|huggingface-cli)$/.test(name ?? '')) return /^(upload|upload-large-folder)$/.test(a1 ?? '');
  if (name === 'wandb') return (a1 === 'artifact' && a2 === 'put') || a1 === 'save';
  if (name === 'kaggle') return /^(create|version|push)$/.test(a2 ?? '');
  if (name === 'mlflow') return a1 === 'artifacts' && /^log-artifacts?$/.test(a2 ?? '');
  return name === 'modal' && a1 === 'volume' && a2 === 'put';
}

/** Commands that print credentials of the ML tools: the running Jupyter servers with their tokens. */
export function mlCredentialPrinter(argv: string[]): string | null {
  const [name, a1, a2] = argv;
  // python -c "…print(get_token())…": the Hugging Face token (or a secret variable) printed.
  if (/^(python[\d.]*|ipython)$/.test(name ?? '') && /\bprint\s*\([^)]*(get_token\s*\(|HfFolder|api_key|os\.environ\s*\[\s*['"]\w*(TOKEN|KEY|SECRET|PASSWORD))/.test(argv.slice(1).join(' '))) return 'a token the code prints';
  if (/^jupyter(-server|-notebook|-lab)?$/.test(name ?? '') && (a1 === 'list' || ((a1 === 'server' || a1 === 'notebook' || a1 === 'lab') && a2 === 'list'))) return 'the running Jupyter servers with their login tokens';
  return null;
}

/** The literal strings among a call's arguments, in order. */
function literalArgs(text: string): string[] {
  return [...text.matchAll(/(['"])((?:\\.|(?!\1).)*)\1/g)].map((m) => m[2]);
}


/**
 * Shell lines that Python code runs beyond subprocess and os.system: IPython's `!cmd`, `%system`/`%sx`
 * and `%%bash`/`%%sh`/`%%script sh` cells (the same in a notebook's cells), the sh module
 * (`from sh import rm; rm('-rf', P)`, `sh.rm(…)`), plumbum (`rm['-rf', P]()`, `local['rm'][…]`), and
 * fabric/invoke/paramiko running a command on a host (`Connection(h).run('…')`, `.sudo('…')`, `exec_command('…')`).
 */
export function pythonShellLines(code: string): string[] {
  const out: string[] = [];
  if (/[!%]/.test(code)) {
    let cell: string[] | null = null;
    for (const line of code.split('\n')) {
      if (cell) {
        cell.push(line);
        continue;
      }
      const m = /^\s*(?:!|%(?:system|sx|sc\s+\w+\s*=)\s*)(.+)$/.exec(line);
      if (m) out.push(m[1]);
      if (/^\s*%%(?:bash|sh|script\s+(?:\S*\/)?(?:ba|z|da)?sh)\b/.test(line)) cell = [];
    }
    if (cell) out.push(cell.join('\n'));
  }
  const shNames = !/\bsh\b/.test(code) ? [] : [...code.matchAll(/\bfrom\s+sh\s+import\s+([\w\s,()]+)/g)].flatMap((m) => m[1].replace(/[()]/g, '').split(',').map((x) => x.trim().split(/\s+as\s+/).pop()!));
  const shModule = /\bimport\s+sh\b/.test(code);
  if (shNames.length > 0 || shModule) for (const m of code.matchAll(/(?<![\w.])(?:sh\.)?([A-Za-z_][\w-]*)\s*\(([^()]*)\)/g)) {
    if (shNames.includes(m[1]) || (m[0].startsWith('sh.') && shModule)) out.push([m[1], ...literalArgs(m[2])].map(shellWord).join(' '));
  }
  if (/\bplumbum\b/.test(code)) {
    const pNames = [...code.matchAll(/\bfrom\s+plumbum\.cmd\s+import\s+([\w\s,]+)/g)].flatMap((m) => m[1].split(',').map((x) => x.trim()));
    for (const m of code.matchAll(/(?<![\w.])(?:local\s*\[\s*['"]([\w-]+)['"]\s*\]|([A-Za-z_]\w*))\s*\[([^\]]*)\]/g)) {
      const cmd = m[1] ?? m[2];
      if (m[1] !== undefined || pNames.includes(cmd)) out.push([cmd, ...literalArgs(m[3])].map(shellWord).join(' '));
    }
  }
  if (/\.\s*(run|sudo|local|exec_command)\s*\(/.test(code)) for (const m of code.matchAll(/(?:\)|\b(?:c|conn|connection|ctx|client|ssh|host|invoke))\s*\.\s*(run|sudo|local|exec_command)\s*\(\s*(?:f?(['"])((?:\\.|(?!\2).)*)\2)/g)) {
    out.push(m[1] === 'sudo' ? `sudo ${m[3]}` : m[3]);
  }
  return out;
}

/**
 * Code that deletes a remote store wholesale through an SDK: Hugging Face repositories, W&B runs and
 * artifacts, S3 buckets (objects.all().delete(), delete_bucket), GCS buckets (every blob listed,
 * then deleted), fsspec/s3fs/gcsfs rm(…, recursive=True) of a bucket or a top-level prefix, Azure
 * containers, vector-database collections. Returns what goes, or null.
 */
export function codeRemoteDelete(code: string): string | null {
  if (!/delete|\.rm\s*\(|drop_collection/i.test(code)) return null;
  if (/\bdelete_repo\s*\(/.test(code)) return 'a Hugging Face repository (delete_repo)';
  const deletes = /\.delete\s*\(/.test(code);
  if (deletes && /\bwandb\b/.test(code) && /\.(runs|artifacts|artifact_versions|artifact_collections|sweep|project)\s*\(/.test(code)) return 'Weights & Biases runs or artifacts';
  if (/\.(objects|object_versions)\s*\.\s*(all|delete)\s*\(|\bdelete_bucket\s*\(|\.Bucket\s*\([^)]*\)\s*\.\s*delete\s*\(/.test(code)) return 'an S3 bucket or every object in it';
  if ((deletes && /\blist_blobs\s*\(/.test(code)) || /\.delete_blobs\s*\(|\.bucket\s*\([^)]*\)\s*\.\s*delete\s*\(\s*force\s*=\s*True/.test(code)) return 'a Google Cloud Storage bucket\'s objects';
  if (/\bdelete_container\s*\(|\.delete_blobs\s*\(/.test(code)) return 'an Azure storage container';
  if (/\b(delete_collection|drop_collection|delete_index)\s*\(/.test(code)) return 'a vector database collection or index';
  for (const m of code.matchAll(/\.(?:rm|delete)\s*\(\s*(['"])([^'"]+)\1[^)]*recursive\s*=\s*True/g)) {
    if (!/fsspec|s3fs|gcsfs|adlfs|FileSystem|filesystem\s*\(/.test(code)) break;
    const segs = m[2].replace(/^[a-z0-9]+:\/\//, '').split('/').filter((s) => s !== '' && s !== '*' && s !== '**');
    if (segs.length <= 2) return `the bucket path ${m[2]} and everything under it`;
  }
  return null;
}

/** Files code empties in place: open(P, 'w') closed unwritten, write_text('') / write_bytes(b''), os.truncate(P, 0). */
export function codeTruncates(code: string): string[] {
  const out: string[] = [];
  if (!/open|write_|truncate/.test(code)) return out;
  for (const m of code.matchAll(/\bopen\s*\(\s*(?:os\.path\.expanduser\s*\(\s*)?(['"])([^'"]+)\1\s*\)?\s*,\s*(['"])wb?\+?\3\s*\)\s*(?:\.\s*close\s*\(|\.\s*write\s*\(\s*b?(['"])\4\s*\))/g)) out.push(m[2]);
  for (const m of code.matchAll(/Path\s*\(\s*(['"])([^'"]+)\1\s*\)(?:\s*\.\s*expanduser\s*\(\s*\))?\s*\.\s*write_(?:text|bytes)\s*\(\s*b?(['"])\3\s*\)/g)) out.push(m[2]);
  for (const m of code.matchAll(/\bos\.truncate\s*\(\s*(?:os\.path\.expanduser\s*\(\s*)?(['"])([^'"]+)\1\s*\)?\s*,\s*0\s*\)/g)) out.push(m[2]);
  return out;
}

/** The notebook a command executes: papermill IN, jupyter nbconvert --execute / jupyter execute NB, ipython NB.ipynb; `-` for stdin. jupytext - -o OUT writes OUT from stdin. */
export function notebookRun(argv: string[]): { file: string; output?: string } | null {
  const [name, a1] = argv;
  const valued = /^(--to|--output|--output-dir|-o|-p|-r|-k|--kernel|--template|--log-level|--cwd|-f|--format|--ExecutePreprocessor\.\w+)$/;
  const operands = argv.slice(1).filter((x, k) => (x === '-' || !x.startsWith('-')) && !valued.test(argv[k] ?? ''));
  if (name === 'papermill') return operands[0] ? { file: operands[0] } : null;
  if (name === 'jupyter' && a1 === 'nbconvert' && argv.includes('--execute')) return operands.slice(1).find((x) => x.endsWith('.ipynb')) ? { file: operands.slice(1).find((x) => x.endsWith('.ipynb'))! } : null;
  if (name === 'jupyter' && a1 === 'execute') return operands[1] ? { file: operands[1] } : null;
  if (name === 'ipython' && operands[0]?.endsWith('.ipynb')) return { file: operands[0] };
  if (name === 'jupytext') {
    const o = argv.findIndex((x) => x === '-o' || x === '--output');
    if (o > 0 && operands.includes('-')) return { file: '-', output: argv[o + 1] };
    if (argv.includes('--execute') && operands[0]) return { file: operands[0] };
  }
  return null;
}

/** A notebook's code: the source of its code cells (JSON .ipynb), or the text itself (a py:percent script). */
export function notebookSource(text: string): string {
  try {
    const nb = JSON.parse(text) as { cells?: { cell_type?: string; source?: string | string[] }[] };
    if (Array.isArray(nb.cells)) return nb.cells.filter((c) => c.cell_type === 'code').map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source ?? '')).join('\n');
  } catch {
    // not JSON: a script in jupytext's percent format, or plain Python
  }
  return text;
}

/**
 * Singularity/Apptainer (exec, run, shell) and enroot (start) read as `docker run` with the same binds:
 * `--bind/-B SRC[:DST[:ro]]` (comma-separated, DST defaults to SRC), `--home DIR`, enroot's `--mount/-m SRC:DST`.
 * (Both also bind the user's home and the working directory by default: paths there are the host's own.)
 */
export function hpcContainerAsDocker(argv: string[]): string[] | null {
  const [name, sub] = argv;
  const enroot = name === 'enroot';
  if (enroot ? sub !== 'start' : !/^(exec|run|shell|instance)$/.test(sub ?? '')) return null;
  const valued = enroot ? /^(-m|--mount|-e|--env|-c|--conf)$/ : /^(-B|--bind|-H|--home|--pwd|--env|--env-file|-o|--overlay|-W|--workdir|--security|--network|--app|--mount|-S|--scratch|--fusemount)$/;
  const out = ['docker', 'run'];
  let k = sub === 'instance' ? 3 : 2;
  for (; k < argv.length && argv[k].startsWith('-'); k++) {
    const eq = argv[k].indexOf('=');
    const key = eq > 0 ? argv[k].slice(0, eq) : argv[k];
    const val = eq > 0 ? argv[k].slice(eq + 1) : argv[k + 1];
    if (/^(-B|--bind|-m|--mount)$/.test(key) && val) {
      for (const spec of val.split(',')) {
        const [src, dst, opt] = spec.split(':');
        out.push('-v', `${src}:${dst ?? src}${opt === 'ro' ? ':ro' : ''}`);
      }
    }
    if (/^(-H|--home)$/.test(key) && val) out.push('-v', `${val.split(':')[0]}:${val.split(':')[1] ?? val.split(':')[0]}`);
    if (eq < 0 && valued.test(key)) k++;
  }
  // apptainer shell IMAGE: the container's shell, reading what the line feeds it.
  if (sub === 'shell' && k === argv.length - 1) return [...out, argv[k], 'sh'];
  return k < argv.length ? [...out, ...argv.slice(k)] : null;
}

/** Model and data files by their extension: weights, checkpoints, columnar and array data. */
export const DATA_FILE_GLOB = /^\*?\.(safetensors|ckpt|pt|pth|bin|h5|hdf5|onnx|gguf|ggml|pkl|joblib|npy|npz|parquet|arrow|feather|tfrecords?|jsonl|csv|tsv|tar|zarr|lmdb|mdb|wav|flac|mp4)$/;

/** Services a token is meant for: sending it there is using it. */
const TOKEN_SERVICE_HOSTS = /^https?:\/\/([\w-]+\.)*(huggingface\.co|hf\.co|wandb\.ai|kaggle\.com|amazonaws\.com|googleapis\.com|github\.com|githubusercontent\.com|openai\.com|anthropic\.com|azure\.com|windows\.net|neptune\.ai|comet\.com|replicate\.com|modal\.com)(\/|$|:)/;

/**
 * Code that reads a credential (a key or token file of the home, the tokens the ML tools keep, a secret
 * environment variable, get_token()) and sends it: to a URL of another service than the token's own, or
 * through an upload or experiment-logging call (boto3 upload_file, run.log, wandb.save). Returns the secret.
 */
export function codeSendsSecret(code: string, talksToNetwork: () => boolean): string | null {
  if (!/\.ssh|\.aws|netrc|credentials|huggingface|kaggle|gcloud|pypirc|npmrc|\.kube|\.docker|get_token|HfFolder|environ|getenv/.test(code)) return null;
  const file = /(\.ssh\/|\.aws\/|\.netrc|\.git-credentials|\.kube\/config|\.docker\/config|["']\.huggingface["']|\.huggingface\/|huggingface\/token|["']\.kaggle["']|kaggle\.json|\.config\/gcloud|\.pypirc|\.npmrc)/.exec(code)?.[1];
  const token = /(\bget_token\s*\(|HfFolder\.get_token|\bos\.environ\s*\[\s*['"]\w*(?:TOKEN|API_?KEY|SECRET|PASSWORD)\w*['"]\s*\]|\bos\.(?:environ\.get|getenv)\s*\(\s*['"]\w*(?:TOKEN|API_?KEY|SECRET|PASSWORD)\w*['"])/.exec(code)?.[1];
  if (!file && !token) return null;
  const uploads = /\b(upload_file|upload_fileobj|put_object|upload_folder|upload_blob|upload_from_filename|upload_from_string|wandb\.save|log_artifact|log_text|log_dict|add_file)\s*\(|\b(run|wandb|experiment|neptune_run|mlflow)\s*\.\s*log\w*\s*\(/.test(code);
  const urls = [...code.matchAll(/['"](https?:\/\/[^'"\s]+)/g)].map((m) => m[1]);
  const elsewhere = urls.some((u) => !TOKEN_SERVICE_HOSTS.test(u));
  if ((elsewhere && talksToNetwork()) || (uploads && (file || (token && elsewhere)))) return (file ?? token)!.replace(/^["']|["']$/g, '');
  return null;
}

/** The ML services' key variables and the hosts they are meant for (beside command-rules' VAR_HOSTS). */
export const ML_VAR_HOSTS: [RegExp, RegExp][] = [
  [/^WANDB_API_KEY$/, /(^|\.)wandb\.(ai|io)$|^localhost$/],
  [/^(KAGGLE_KEY|KAGGLE_API_KEY)$/, /(^|\.)kaggle\.com$/],
  [/^(HUGGINGFACEHUB_API_TOKEN|HF_API_TOKEN|HUGGING_FACE_TOKEN)$/, /(^|\.)(huggingface|hf)\.co$/],
  [/^(NEPTUNE_API_TOKEN)$/, /(^|\.)neptune\.ai$/],
  [/^(COMET_API_KEY)$/, /(^|\.)comet\.(com|ml)$/],
  [/^(REPLICATE_API_TOKEN)$/, /(^|\.)replicate\.com$/],
];

/** Directories the ML libraries name through calls (their documented defaults): read as the literal paths. */
const ML_DIRS: [RegExp, string][] = [
  [/\btorch\.hub\.get_dir\(\)/g, '"~/.cache/torch/hub"'],
  [/\b(?:huggingface_hub\.)?constants\.HF_HUB_CACHE\b/g, '"~/.cache/huggingface/hub"'],
  [/\b(?:huggingface_hub\.)?constants\.HF_HOME\b/g, '"~/.cache/huggingface"'],
  [/\bdatasets\.config\.HF_DATASETS_CACHE\b/g, '"~/.cache/huggingface/datasets"'],
];

/** Python code with the ML libraries' directory calls (torch.hub.get_dir()) put in as literal paths. */
export function withMlDirs(code: string): string {
  return /get_dir|HF_/.test(code) ? ML_DIRS.reduce((c, [re, v]) => c.replace(re, v), code) : code;
}
