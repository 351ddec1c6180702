/**
 * In-place destruction of the user's own documents and media, without rm: tools that overwrite, empty or
 * rewrite files where they lie (shred, truncate to zero, ImageMagick's mogrify, exiftool -all= with
 * -overwrite_original) pointed at the folders where a person keeps their work (~/Documents, ~/Pictures,
 * ~/Music, ~/Videos, ~/Desktop, synced folders: isPreciousHomeDir and what is under it). Nothing of the
 * originals is left to restore, as with a recursive delete. The same tools on the project's build output,
 * on /tmp or on a copy are everyday work and are not judged here.
 */
import { isPreciousHomeDir, type PathEnv } from './paths-classify';

/** The cheap gate: a line without one of these tool names needs none of the rules below. */
export function mayMatch(line: string): boolean {
  return line.includes('shred') || line.includes('truncate') || line.includes('mogrify') || line.includes('exiftool');
}

/** A path in one of the user's own folders of documents and media (the folder itself or anything under it). */
function inUserFolder(p: string, env: PathEnv): boolean {
  for (let d = p; d.length > env.home.length + 1 && d.startsWith(`${env.home}/`); d = d.slice(0, d.lastIndexOf('/'))) {
    if (isPreciousHomeDir(d, env) && !d.slice(env.home.length + 1).startsWith('.')) return true;
  }
  return false;
}

/**
 * The reason to block `argv`, given the absolute paths its operands name (null where unknown), or null.
 * shred and truncate -s 0 destroy the content; mogrify and exiftool -overwrite_original rewrite it and keep no original.
 */
export function inPlaceLoss(argv: string[], paths: (string | null)[], env: PathEnv): string | null {
  const [name = '', ...args] = argv;
  const hit = paths.find((p): p is string => p !== null && inUserFolder(p, env));
  if (!hit) return null;
  if (name === 'shred') return `shred overwrites ${hit}, the user's own files: nothing can bring them back`;
  if (name === 'truncate' && args.some((a, k) => (/^(-s|--size)$/.test(args[k - 1] ?? '') && /^0+$/.test(a)) || /^(--size=|-s)0+$/.test(a))) return `truncate -s 0 empties ${hit}, the user's own files: their content is gone`;
  if (name === 'mogrify' || (name === 'gm' && args[0] === 'mogrify')) return `mogrify rewrites ${hit} in place, the user's own images: the originals are not kept`;
  // (Setting or clearing named tags, -Artist=…, -gps:all=, is everyday work; -all= wipes captions, ratings, keywords and copyright.)
  if (name === 'exiftool' && args.some((a) => /^-overwrite_original(_in_place)?$/.test(a)) && args.includes('-all=')) return `exiftool -all= -overwrite_original strips every tag of ${hit}, the user's own files (captions, keywords, copyright), and keeps no original`;
  return null;
}
