/**
 * The settings of hooks-cli (`config/settings.json`): groups, keys, defaults
 * and ranges as the spec gives them, and one JSON schema that both the CLI
 * (ajv at run time) and the hooks (ajv standalone code generated when the
 * hooks are bundled, so no ajv load on the hook path) validate with.
 */

export interface Settings {
  context_monitor: {
    backup_threshold: number;
    emergency_threshold: number;
    max_context_tokens: number;
    tokens_per_char: number;
    tool_overhead: number;
    system_overhead: number;
  };
  backup_manager: {
    max_backups: number;
    backup_on_critical_ops: boolean;
    git_enabled: boolean;
    filesystem_backup_enabled: boolean;
    /** Files bigger than this are left out of a backup (and named in the hook's message). */
    max_file_size_mb: number;
    /** A backup whose files add up to more than this is not taken (the message says so). */
    max_total_size_mb: number;
    /** A backup that takes longer is abandoned (never longer than the hook's own budget). */
    max_backup_time_ms: number;
  };
  session_docs: {
    /** Where LAST_SESSION.md, ACTIVE_TODOS.md and RECOVERY_GUIDE.md go, relative to the project. */
    directory: string;
    /** When they are outside .hooks_data/ in a git work tree: list them in .git/info/exclude. */
    exclude_from_git: boolean;
  };
  shadow_learner: {
    max_patterns: number;
    confidence_threshold: number;
    evidence_threshold: number;
    cache_ttl_seconds: number;
    learning_enabled: boolean;
  };
  security: {
    dangerous_commands_blocked: boolean;
    suspicious_commands_warned: boolean;
    path_traversal_protection: boolean;
    system_files_protection: boolean;
  };
  performance: {
    rate_limit_ms: number;
    max_hook_execution_time: number;
    async_logging: boolean;
    cache_predictions: boolean;
  };
  logging: {
    log_level: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
    log_executions: boolean;
    log_retention_days: number;
    detailed_errors: boolean;
  };
}

export function defaultSettings(): Settings {
  return {
    context_monitor: {
      backup_threshold: 0.85,
      emergency_threshold: 0.95,
      max_context_tokens: 200000,
      tokens_per_char: 0.25,
      tool_overhead: 200,
      system_overhead: 500,
    },
    backup_manager: {
      max_backups: 10,
      backup_on_critical_ops: true,
      git_enabled: true,
      filesystem_backup_enabled: true,
      max_file_size_mb: 10,
      max_total_size_mb: 100,
      max_backup_time_ms: 3000,
    },
    session_docs: { directory: '.hooks_data', exclude_from_git: true },
    shadow_learner: { max_patterns: 10000, confidence_threshold: 0.8, evidence_threshold: 5, cache_ttl_seconds: 300, learning_enabled: true },
    security: {
      dangerous_commands_blocked: true,
      suspicious_commands_warned: true,
      path_traversal_protection: true,
      system_files_protection: true,
    },
    performance: { rate_limit_ms: 100, max_hook_execution_time: 5000, async_logging: true, cache_predictions: true },
    logging: { log_level: 'INFO', log_executions: true, log_retention_days: 7, detailed_errors: false },
  };
}

const num = (minimum: number, maximum: number) => ({ type: 'number', minimum, maximum });
const int = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });
const bool = { type: 'boolean' };
const group = (properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, properties });

/**
 * Every key is optional (a file may set only what it changes; the rest are
 * the defaults); unknown keys are errors, so a typo never silently does nothing.
 * Ranges the spec leaves open are chosen so a value cannot disable the tool by
 * accident (a zero token budget, a 0 ms hook budget).
 */
export const settingsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    context_monitor: group({
      backup_threshold: num(0, 1),
      emergency_threshold: num(0, 1),
      max_context_tokens: int(1000, 10_000_000),
      tokens_per_char: { type: 'number', exclusiveMinimum: 0, maximum: 10 },
      tool_overhead: int(0, 1_000_000),
      system_overhead: int(0, 1_000_000),
    }),
    backup_manager: group({
      max_backups: int(1, 1000),
      backup_on_critical_ops: bool,
      git_enabled: bool,
      filesystem_backup_enabled: bool,
      max_file_size_mb: num(0, 100_000),
      max_total_size_mb: num(0, 1_000_000),
      max_backup_time_ms: int(100, 600_000),
    }),
    session_docs: group({
      directory: { type: 'string', pattern: '\\S' }, // not blank (minLength would need ajv at run time)
      exclude_from_git: bool,
    }),
    shadow_learner: group({
      max_patterns: int(1, 1_000_000),
      confidence_threshold: num(0, 1),
      evidence_threshold: int(1, 1_000_000),
      cache_ttl_seconds: int(0, 86_400),
      learning_enabled: bool,
    }),
    security: group({
      dangerous_commands_blocked: bool,
      suspicious_commands_warned: bool,
      path_traversal_protection: bool,
      system_files_protection: bool,
    }),
    performance: group({
      rate_limit_ms: int(0, 60_000),
      max_hook_execution_time: int(100, 600_000),
      async_logging: bool,
      cache_predictions: bool,
    }),
    logging: group({
      log_level: { enum: ['DEBUG', 'INFO', 'WARNING', 'ERROR'] },
      log_executions: bool,
      log_retention_days: int(1, 3650),
      detailed_errors: bool,
    }),
  },
} as const;

/** The part of an ajv error the messages need (ajv's ErrorObject, structurally). */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

export type SettingsValidator = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };

/** One line per error, naming the key as `group.key`. */
export function describeSchemaErrors(errors: readonly SchemaError[]): string[] {
  return errors.map((e) => {
    const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (e.keyword === 'additionalProperty' || e.keyword === 'additionalProperties') {
      const key = at ? `${at}.${String(e.params.additionalProperty)}` : String(e.params.additionalProperty);
      return `${key}: unknown key`;
    }
    if (e.keyword === 'enum') return `${at}: must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    return `${at || '(top level)'}: ${e.message ?? e.keyword}`;
  });
}
