/**
 * A tool's own destroy verb on a named durable resource, with its confirmation turned off, for ANY
 * program: `<cli> [noun[:sub]…] delete|destroy|rm|remove|purge|drop|wipe|erase|nuke|obliterate|
 * unregister|terminate|deprovision|teardown … --force|--yes|--confirm|--cascade|-auto-approve…`
 * (hosting and database services, warehouses, queues, version-control servers, secret stores). The
 * prompt such a tool shows is its last safeguard; an assistant that turns it off destroys what the
 * tool was asking about.
 *
 * Not this rule's: tools whose destroy verbs other rules judge with more knowledge (the filesystem,
 * git, containers, Kubernetes, Terraform, the cloud and storage CLIs, SQL clients), package and
 * environment managers removing what they installed (npm, pip, brew, apt, conda env remove…),
 * ephemeral things (containers, pods, images, caches, sessions, preview deployments and branches) and
 * targets named as throwaway (dev, test, tmp, scratch, sandbox, preview, demo, local, kind-, minikube),
 * and paths (build output is deleted by path, and paths are judged as deletes).
 */
import { storeScope } from './sql-rules';

const VERB = /^(delete|destroy|rm|remove|obliterate|nuke|purge|drop|wipe|erase|unregister|terminate|deprovision|teardown|tear-down|delete-all|destroy-all|remove-all|purge-all)$/i;
/** Flags that answer the tool's prompt in advance. */
const NO_PROMPT = /^(--force|-f|--yes|-y|--confirm(=.*)?|--cascade|-recurse|--recurse|-skipTrash|-auto-approve|--auto-approve|--quiet|-q|--no-prompt|--non-interactive|--noinput|--no-input|--assume-yes|--force-delete|--permanent|--permanently|--hard|--skip-confirmation|--no-confirm|--yes-i-really-mean-it|--really|--i-am-sure|-Force|-Confirm:\$false)$/;
/**
 * Programs judged elsewhere or that only remove what they installed: the filesystem and git, containers
 * and clusters, infrastructure and cloud CLIs with their own tables, SQL and store clients, package,
 * language and environment managers, editors' extensions, local VMs and simulators.
 */
const OTHERS = /^(rm|rmdir|unlink|shred|find|fd|xargs|git|trash|trash-put|gio|docker|podman|nerdctl|ctr|crictl|kubectl|oc|helm|kind|minikube|k3d|k3s|microk8s|terraform|tofu|terragrunt|pulumi|aws|gcloud|gsutil|az|s3cmd|s5cmd|rclone|mc|azcopy|b2|psql|mysql|mariadb|sqlite3|mongosh|mongo|redis-cli|bq|snowsql|dbt|hdfs|hadoop|databricks|rpk|npm|npx|pnpm|yarn|bun|pip|pip3|pipx|uv|poetry|pdm|conda|mamba|micromamba|brew|port|apt|apt-get|aptitude|dpkg|dnf|yum|rpm|zypper|pacman|apk|snap|flatpak|nix|nix-env|cargo|rustup|go|gem|bundle|composer|cpan|cpanm|opam|cabal|stack|mix|dotnet|nuget|choco|winget|scoop|sdk|asdf|mise|rtx|nvm|fnm|volta|pyenv|rbenv|jenv|goenv|tfenv|code|codium|cursor|jupyter|vagrant|multipass|virsh|VBoxManage|xcrun|simctl|avdmanager|sdkmanager|emulator|adb|fastboot|flutter|pod|ansible-galaxy|vscode|systemctl|launchctl|ssh-keygen|ssh-add|gpg|security|keytool|certutil|openssl|ipfs|make|cmake|bazel|gradle|mvn|ant|ninja|meson|sudo|env|nice|timeout)$/;
/** Nouns of things that are made again at will or live briefly, and single entries inside a store (a key, a record, a secret). */
const EPHEMERAL = /^(containers?|pods?|images?|caches?|cache-entries|sessions?|tokens?|previews?|preview-deployments?|branch(es)?|deployments?|builds?|runs?|logs?|artifacts?|tmp|temp|locks?|leases?|alias(es)?|invitations?|kernelspecs?|envs?|venvs?|jobs?|tasks?|spans?|traces?|notifications?|keys?|records?|entry|entries|items?|objects?|messages?|values?|rows?|documents?|secrets?|variables?|vars?)$/i;
/** Targets named as short-lived (beyond storeScope's throwaway words). */
const SHORT_LIVED = /(^|[^a-z0-9])(preview|demo|review|ephemeral|pr-?\d+|kind|minikube|feature|cache|example|sample)([^a-z0-9]|$)/i;

/** The destroy verb of an argv, with the target words after it, or null. */
function destroyVerb(argv: string[]): { verb: string; targets: string[] } | null {
  const words = argv.slice(1, 8);
  // <cli> [noun[:sub]…] VERB: the verb among the first few words that are not options (noun:verb too, apps:destroy).
  let seen = 0;
  for (let k = 0; k < words.length && seen < 4; k++) {
    const w = words[k];
    if (w.startsWith('-')) continue;
    seen++;
    const verb = w.includes(':') ? w.slice(w.lastIndexOf(':') + 1) : w;
    if (!VERB.test(verb)) continue;
    const nouns = [...words.slice(0, k).filter((x) => !x.startsWith('-')), ...(w.includes(':') ? w.split(':').slice(0, -1) : [])];
    if (nouns.some((n) => EPHEMERAL.test(n))) return null;
    return { verb: w, targets: argv.slice(k + 2) };
  }
  return null;
}

/**
 * Why the invocation destroys a named durable resource past its prompt, or null. `confirmed`: its
 * stdin answers yes (yes |, echo y |).
 */
export function destroyFinding(argv: string[], confirmed: boolean): string | null {
  const name = argv[0];
  if (name === undefined || OTHERS.test(name) || /^(python|node|ruby|perl|php|bash|sh|zsh)/.test(name)) return null;
  const flag = argv.find((a) => NO_PROMPT.test(a)) ?? (confirmed ? 'yes |' : undefined);
  if (flag === undefined || argv.some((a) => /^--(dry-?run|dryrun|what-?if|plan|preview)(=true)?$|^-n$/i.test(a))) return null;
  const d = destroyVerb(argv);
  if (d === null) return null;
  // firejail --quiet rm -rf build, faketime … rm -f x: a wrapper running rm, judged as that rm (rm's own flags, or the flag before the verb).
  if (/^(rm|rmdir|unlink|shred)$/.test(d.verb) && (d.targets.some((t) => /^-[rRfvidI]+$/.test(t)) || argv.indexOf(flag) < argv.indexOf(d.verb))) return null;
  // A named target: a word after the verb that is not a flag (an option's value counts: --app NAME).
  const named = d.targets.filter((t) => !t.startsWith('-') || /^--[\w-]+=./.test(t)).map((t) => t.replace(/^--[\w-]+=/, ''));
  if (named.length === 0) return null;
  // Paths are deletes of files, judged as such (build output, caches).
  if (named.every((t) => /^(\.{1,2}\/|~|\/(?!\/))/.test(t) || /\.(json|ya?ml|toml|txt|lock|log)$/.test(t))) return null;
  if (storeScope(named) === 'throwaway' || named.some((t) => SHORT_LIVED.test(t))) return null;
  return `${argv.slice(0, 3).join(' ')} destroys ${named.slice(0, 2).join(' ')} with the tool's confirmation turned off (${flag}): what it held is gone for good`;
}
