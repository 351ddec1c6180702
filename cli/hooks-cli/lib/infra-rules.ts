/**
 * Infrastructure tools' own destructive modes, beyond destroy and delete (judged in command-rules.ts
 * checkServices): what a DevOps engineer's Terraform, cluster and Ansible commands lose for good.
 *
 * - Terraform's record of what exists: the remote state overwritten by an old file
 *   (`state push -force`), a workspace's state dropped while it still tracks resources
 *   (`workspace delete -force`), a local state file deleted (`rm terraform.tfstate`): the resources
 *   live on, unmanaged. A stateful resource (a database, disk, bucket, key) replaced by
 *   `apply -auto-approve -replace=ADDR`: destroyed and made again empty, with no prompt.
 * - A cluster node or control plane wiped: `kubeadm reset -f` (etcd's data with it), k3s's and
 *   RKE2's uninstall scripts, `microk8s reset --destroy-storage`.
 * - Ansible ad-hoc modules read as the shell lines they amount to on every host of the inventory
 *   (`file mode=0777 recurse=yes` is `chmod -R 0777`, `cron job=CMD` runs CMD, `copy src=F` sends F to
 *   the hosts, `uri … body={{ lookup('file', F) }}` posts F): command-rules.ts collects them as run
 *   on other hosts.
 *
 * Pure functions over argv and paths; command-rules.ts calls them for the programs mayMatch() names.
 */

/** Cheap gate: the programs this module judges. */
export function mayMatch(line: string): boolean {
  return line.includes('terraform') || line.includes('tofu') || line.includes('kubeadm') || line.includes('k3s') || line.includes('rke2') || line.includes('microk8s') || line.includes('ansible');
}

/** Resource types that hold data: replaced, they come back empty. */
const STATEFUL = /(^|_)(db|database|rds|sql|sqlserver|postgres(ql)?|mysql|mariadb|disk|volume|ebs|bucket|storage|file_?system|efs|fsx|filestore|redis|elasticache|memorystore|dynamodb|bigquery|cosmosdb|bigtable|spanner|kms|key|key_vault|secret|opensearch|elasticsearch|docdb|neptune|redshift|kafka|msk|snapshot|backup)(_|\.|$)/i;

/** Why a Terraform, cluster or node command destroys what it manages, or null. */
export function infraDestroyFinding(argv: string[]): string | null {
  const name = (argv[0] ?? '').replace(/^.*\//, '');
  // terraform -chdir=DIR …: global options before the subcommand.
  const args = argv.slice(1).filter((a, k) => !(k === 0 && a.startsWith('-chdir')));
  if (/^(terraform|tofu|terragrunt)$/.test(name)) {
    const force = args.some((a) => /^-{1,2}force(=true)?$/.test(a));
    if (args[0] === 'state' && args[1] === 'push' && force) return `${name} state push -force overwrites the remote state with ${args.find((a, k) => k > 1 && !a.startsWith('-')) ?? 'a local file'}: every resource made since that file is no longer tracked`;
    if (args[0] === 'workspace' && /^(delete|rm)$/.test(args[1] ?? '') && force) return `${name} workspace delete -force drops the state of ${args.filter((a, k) => k > 1 && !a.startsWith('-')).join(' ') || 'a workspace'} while it still tracks resources: they live on, unmanaged`;
    const replaced = args.filter((a) => /^-replace=/.test(a)).map((a) => a.slice(9)).filter((addr) => STATEFUL.test(addr.replace(/\[.*$/, '').split('.').slice(-2, -1)[0] ?? ''));
    if (args[0] === 'apply' && replaced.length > 0 && args.some((a) => /^-auto-approve(=true)?$/.test(a))) return `${name} apply -auto-approve -replace=${replaced[0]} destroys ${replaced[0]} and makes it again empty, with no prompt: its data is gone`;
    return null;
  }
  if (name === 'kubeadm' && args[0] === 'reset' && args.some((a) => /^(-f|--force)$/.test(a))) return 'kubeadm reset -f wipes the node\'s cluster state (on a control-plane node, etcd\'s data: the whole cluster\'s)';
  if (/^(k3s-uninstall|k3s-agent-uninstall|rke2-uninstall)\.sh$/.test(name)) return `${name} removes the cluster from this node, with its data (etcd or the datastore, volumes)`;
  if (name === 'microk8s' && args[0] === 'reset' && args.includes('--destroy-storage')) return 'microk8s reset --destroy-storage deletes the cluster\'s workloads and their storage';
  return null;
}

/** A Terraform state file (terraform.tfstate, env.tfstate, the per-workspace terraform.tfstate.d): the only record of what exists. Backups are not. */
export function isStateFile(abs: string): boolean {
  return /(^|\/)[^/]*\.tfstate$|(^|\/)terraform\.tfstate\.d$/.test(abs);
}

/**
 * A deployed application's releases or shared directory (the Capistrano and Deployer layout under /opt,
 * /srv, /var/www, a deploy user's home): every release, the running one among them, or the uploads and
 * settings all releases share. Emptied, the application is down and its users' files are gone.
 */
export function deployTreeLoss(abs: string): string | null {
  return /^\/(opt|srv|var\/www|home\/[^/]+|u\/apps|apps|data\/www)\/([^/]+\/){1,3}(releases|shared)$/.test(abs) ? `${abs}, a deployed application's ${abs.endsWith('releases') ? 'releases (the running one among them)' : 'shared files (uploads, settings)'}` : null;
}

/** A state file copied to a bucket named for states (s3://acme-tf-state/…): kept where it belongs, not sent away. */
export function toStateBucket(args: string[]): boolean {
  return args.some((a) => /^(s3|gs|az|azure|https):\/\/[^/\s]*(tf-?state|terraform|tfstate)[^/\s]*(\/|$)/i.test(a));
}

/** key=value arguments of an Ansible module (quotes and {{ … }} kept together). */
function moduleArgs(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/(\w+)=('([^']*)'|"([^"]*)"|((?:\{\{[^}]*\}\}|[^\s])+))/g)) out.set(m[1], m[3] ?? m[4] ?? m[5] ?? '');
  return out;
}

/**
 * The shell lines an Ansible ad-hoc module amounts to, or [] when none: `local` lines run here (a copy
 * pushes this machine's file to the hosts), the others on the hosts. `--check` changes nothing.
 */
export function ansibleModuleAsShell(argv: string[]): { line: string; local: boolean }[] {
  if ((argv[0] ?? '').replace(/^.*\//, '') !== 'ansible' || argv.some((a) => a === '--check' || a === '-C')) return [];
  const mod = (argv.find((_, k) => /^(-m|--module-name)$/.test(argv[k - 1] ?? '')) ?? argv.find((a) => a.startsWith('--module-name='))?.slice(14) ?? '').replace(/^ansible\.builtin\./, '');
  const a = moduleArgs(argv.find((_, k) => /^(-a|--args)$/.test(argv[k - 1] ?? '')) ?? '');
  // (A leading ~/ stays outside the quotes: Ansible expands it as the shell would.)
  const q = (s: string) => (s.startsWith('~/') ? '~/' : '') + `'${s.replace(/^~\//, '').replace(/'/g, `'\\''`)}'`;
  const path = a.get('path') ?? a.get('dest') ?? a.get('name');
  const recurse = /^(yes|true|1)$/i.test(a.get('recurse') ?? '');
  switch (mod) {
    case 'file': {
      if (!path) return [];
      const out: { line: string; local: boolean }[] = [];
      if (a.has('mode')) out.push({ line: `chmod ${recurse ? '-R ' : ''}${q(a.get('mode')!)} ${q(path)}`, local: false });
      if (a.has('owner')) out.push({ line: `chown ${recurse ? '-R ' : ''}${q(a.get('owner')!)} ${q(path)}`, local: false });
      return out;
    }
    case 'lineinfile':
    case 'blockinfile': {
      // A line put into a start-up file or a crontab of the hosts runs there, at the next login or on schedule.
      const text = a.get('line') ?? a.get('block');
      return text && path && a.get('state') !== 'absent' && /(^|\/)\.(bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv)$|^\/etc\/(profile|profile\.d\/.+|bash\.bashrc|bashrc|zsh\/zshrc|environment|rc\.local|crontab|cron\.[^/]+\/.+)$|^\/var\/spool\/cron\//.test(path) ? [{ line: text, local: false }] : [];
    }
    case 'cron':
      return a.has('job') && a.get('state') !== 'absent' ? [{ line: a.get('job')!, local: false }] : [];
    case 'copy':
    case 'template':
      // Sent from this machine (unless remote_src says the source is on the host already).
      return a.has('src') && !/^(yes|true)$/i.test(a.get('remote_src') ?? '') ? [{ line: `scp ${q(a.get('src')!)} ${q(`target-host:${a.get('dest') ?? '/tmp/'}`)}`, local: true }] : [];
    case 'uri': {
      const url = a.get('url');
      if (!url) return [];
      const file = /lookup\(\s*['"]file['"]\s*,\s*['"]([^'"]+)['"]\s*\)/.exec(a.get('body') ?? '')?.[1] ?? a.get('src');
      return file ? [{ line: `curl -X ${a.get('method') ?? 'POST'} --data-binary ${q(`@${file}`)} ${q(url)}`, local: true }] : [];
    }
    default:
      return [];
  }
}
