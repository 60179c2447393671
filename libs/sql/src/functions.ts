// Functions by replica safety: built-ins that are safe anywhere, and those that need the primary (or a pin).
import type { Dialect } from './tokenizer';
import type { UnsafeReasonCode } from './classification';

const words = (list: string): string[] => list.trim().split(/\s+/);

/** Built-ins of both dialects (and type names that appear with parentheses) that read nothing but their arguments and the data. */
const COMMON_SAFE = words(`
  abs acos ascii asin atan atan2 avg bit_length cast ceil ceiling char char_length character_length coalesce concat
  concat_ws cos cot count cume_dist current_date current_time current_timestamp date dense_rank degrees exp extract
  first_value floor format greatest lag last_value lead least left length ln localtime localtimestamp log lower lpad ltrim
  max md5 min mod now nth_value ntile nullif octet_length percent_rank pi position power radians rank repeat replace
  reverse right round row row_number rpad rtrim sign sin sqrt stddev stddev_pop stddev_samp substr substring sum tan
  time timestamp trim trunc truncate upper var_pop var_samp variance version filter
  int integer smallint bigint tinyint mediumint decimal numeric float double real varchar nchar binary varbinary datetime
  year bit boolean bool text json jsonb interval rollup cube grouping sets bernoulli system
  st_astext st_geomfromtext st_distance st_contains st_within st_intersects st_x st_y st_srid point
`);

const MYSQL_SAFE = words(`
  adddate addtime aes_decrypt aes_encrypt any_value benchmark bin bin_to_uuid bit_and bit_count bit_or bit_xor charset
  coercibility collation compress conv convert convert_tz crc32 curdate current_role curtime database date_add
  date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear elt export_set field find_in_set format_bytes
  from_base64 from_days from_unixtime group_concat hex hour if ifnull inet_aton inet_ntoa inet6_aton inet6_ntoa insert
  instr is_ipv4 is_ipv6 is_uuid isnull json_array json_arrayagg json_contains json_contains_path json_depth json_extract
  json_insert json_keys json_length json_merge json_merge_patch json_merge_preserve json_object json_objectagg
  json_overlaps json_pretty json_quote json_remove json_replace json_schema_valid json_search json_set json_storage_size
  json_table json_type json_unquote json_valid json_value last_day lcase locate log10 log2 make_set makedate maketime
  match microsecond mid minute month monthname oct ord period_add period_diff pow quarter quote rand random_bytes
  regexp_instr regexp_like regexp_replace regexp_substr schema sec_to_time second sha sha1 sha2 sleep soundex space std
  str_to_date strcmp subdate substring_index subtime sysdate time_format time_to_sec timediff timestampadd timestampdiff
  to_base64 to_days to_seconds ucase uncompress uncompressed_length unhex unix_timestamp utc_date utc_time utc_timestamp
  uuid uuid_short uuid_to_bin values week weekday weekofyear weight_string yearweek user current_user session_user
  system_user char_length against
`);

const POSTGRES_SAFE = words(`
  age array_agg array_append array_cat array_dims array_length array_lower array_position array_positions array_prepend
  array_remove array_replace array_to_json array_to_string array_upper bool_and bool_or btrim cardinality cbrt
  clock_timestamp col_description current_database current_schema current_schemas current_setting date_bin date_part
  date_trunc decode div encode every exists format_type gen_random_uuid generate_series generate_subscripts
  has_any_column_privilege has_column_privilege has_database_privilege has_function_privilege has_schema_privilege
  has_sequence_privilege has_table_privilege initcap isfinite json_agg json_array_elements json_array_elements_text
  json_array_length json_build_array json_build_object json_each json_each_text json_extract_path json_extract_path_text
  json_object_agg json_object_keys json_populate_record json_strip_nulls json_to_record json_typeof jsonb_agg
  jsonb_array_elements jsonb_array_elements_text jsonb_array_length jsonb_build_array jsonb_build_object jsonb_each
  jsonb_each_text jsonb_extract_path jsonb_extract_path_text jsonb_insert jsonb_object_agg jsonb_object_keys
  jsonb_path_exists jsonb_path_query jsonb_pretty jsonb_set jsonb_strip_nulls jsonb_typeof justify_days justify_hours
  justify_interval make_date make_interval make_time make_timestamp make_timestamptz num_nonnulls num_nulls
  obj_description overlay pg_column_size pg_database_size pg_encoding_to_char pg_function_is_visible pg_get_constraintdef
  pg_get_expr pg_get_function_arguments pg_get_function_result pg_get_functiondef pg_get_indexdef pg_get_keywords
  pg_get_ruledef pg_get_serial_sequence pg_get_triggerdef pg_get_userbyid pg_get_viewdef pg_has_role
  pg_indexes_size pg_relation_size pg_size_pretty pg_table_is_visible pg_table_size pg_total_relation_size pg_type_is_visible
  pg_sleep quote_ident quote_literal quote_nullable random regexp_match regexp_matches regexp_replace regexp_split_to_array
  regexp_split_to_table row_to_json scale setseed shobj_description split_part starts_with statement_timestamp
  string_agg string_to_array strpos timeofday to_char to_date to_hex to_json to_jsonb to_number to_regclass to_regproc
  to_regtype to_timestamp transaction_timestamp translate unnest uuid_generate_v4 width_bucket xmlagg array
  array_fill percentile_cont percentile_disc mode regr_slope corr covar_pop covar_samp float4 float8 int2 int4 int8
  timestamptz timetz numrange int4range int8range tsrange tstzrange daterange to_tsvector to_tsquery plainto_tsquery
  websearch_to_tsquery ts_rank ts_headline operator
`);

/** Functions that need the primary, by why. */
const UNSAFE = new Map<string, { code: UnsafeReasonCode; pins: boolean }>();
const mark = (list: string, code: UnsafeReasonCode, pins = false): void => {
  for (const name of words(list)) UNSAFE.set(name, { code, pins });
};
mark('last_insert_id found_rows row_count connection_id ps_current_thread_id master_pos_wait source_pos_wait wait_for_executed_gtid_set wait_until_sql_thread_after_gtids', 'state_function');
mark('pg_backend_pid inet_client_addr inet_client_port pg_is_in_recovery pg_last_wal_receive_lsn pg_last_wal_replay_lsn pg_last_xact_replay_timestamp txid_current txid_current_if_assigned txid_current_snapshot pg_current_xact_id pg_current_xact_id_if_assigned pg_current_snapshot pg_current_wal_lsn pg_current_wal_insert_lsn pg_current_wal_flush_lsn pg_export_snapshot', 'state_function');
mark('get_lock', 'lock_function', true);
mark('release_lock release_all_locks is_free_lock is_used_lock', 'lock_function', true);
mark('pg_advisory_lock pg_advisory_lock_shared pg_try_advisory_lock pg_try_advisory_lock_shared pg_advisory_unlock pg_advisory_unlock_shared pg_advisory_unlock_all', 'lock_function', true);
mark('pg_advisory_xact_lock pg_advisory_xact_lock_shared pg_try_advisory_xact_lock pg_try_advisory_xact_lock_shared', 'lock_function');
mark('nextval currval lastval setval', 'sequence_function');
mark('pg_notify pg_cancel_backend pg_terminate_backend pg_reload_conf pg_rotate_logfile pg_switch_wal pg_create_restore_point lo_import lo_export lo_create lo_unlink lo_from_bytea pg_stat_reset dblink dblink_exec', 'side_effect_function');
mark('set_config', 'side_effect_function', true);

const SAFE: Record<Dialect, Set<string>> = {
  mysql: new Set([...COMMON_SAFE, ...MYSQL_SAFE]),
  postgresql: new Set([...COMMON_SAFE, ...POSTGRES_SAFE]),
};

/** Schemas whose functions are built-ins. */
const BUILTIN_SCHEMAS = new Set(['pg_catalog', 'information_schema', 'sys', 'mysql', 'performance_schema']);

export type FunctionVerdict = { readonly safe: true } | { readonly safe: false; readonly code: UnsafeReasonCode; readonly pins: boolean };

const SAFE_VERDICT: FunctionVerdict = Object.freeze({ safe: true });

/**
 * Whether calling `name` (optionally schema-qualified) keeps a read replica-safe. `schema` and
 * `name` are canonical (see `functionNamePart`): the built-in lists are lower case, so a PostgreSQL
 * quoted name with upper case (`"NEXTVAL"`) is a different, user-defined function. Unknown
 * functions are user-defined: unsafe unless `allowed` (canonical names) lists them, bare or qualified.
 */
export function judgeFunction(dialect: Dialect, schema: string | undefined, name: string, allowed: ReadonlySet<string>): FunctionVerdict {
  const builtinSchema = schema === undefined || BUILTIN_SCHEMAS.has(schema);
  const unsafe = UNSAFE.get(name);
  if (unsafe !== undefined && builtinSchema) return { safe: false, code: unsafe.code, pins: unsafe.pins };
  if (allowed.has(schema === undefined ? name : `${schema}.${name}`) || allowed.has(name)) return SAFE_VERDICT;
  if (builtinSchema && (SAFE[dialect].has(name) || name.startsWith('st_'))) return SAFE_VERDICT;
  return { safe: false, code: 'user_function', pins: false };
}

/**
 * The canonical form of one part of a function name, compared as the server compares it: MySQL
 * function names are case-insensitive, quoted or not; PostgreSQL folds unquoted names to lower
 * case and keeps a quoted name exactly. `quoted` is the name without its quotes.
 */
export function functionNamePart(dialect: Dialect, text: string, quoted: boolean): string {
  return quoted && dialect === 'postgresql' ? text : text.toLowerCase();
}

/**
 * An `allowedFunctions` entry in canonical form: `name` or `schema.name`, each part bare or quoted
 * (`"MyFn"`, `` `my_udf` ``) and canonicalized like a name in a statement.
 */
export function canonicalFunctionName(dialect: Dialect, entry: string): string {
  const parts: string[] = [];
  let i = 0;
  while (i <= entry.length) {
    const quote = entry[i];
    if (quote === '"' || quote === '`') {
      let text = '';
      let j = i + 1;
      for (; j < entry.length; j++) {
        if (entry[j] !== quote) text += entry[j];
        else if (entry[j + 1] === quote) text += entry[j++];
        else break;
      }
      parts.push(functionNamePart(dialect, text, true));
      i = j + 2; // past the closing quote and the dot
    } else {
      const dot = entry.indexOf('.', i);
      const end = dot < 0 ? entry.length : dot;
      parts.push(functionNamePart(dialect, entry.slice(i, end).trim(), false));
      i = end + 1;
    }
  }
  return parts.join('.');
}

/** MySQL system variables whose value depends on the connection's last statement or identity. */
const STATE_SYSTEM_VARIABLES = new Set(words(`
  identity last_insert_id insert_id warning_count error_count rand_seed1 rand_seed2 read_only super_read_only
  innodb_read_only hostname server_id server_uuid gtid_executed gtid_current_pos gtid_binlog_pos gtid_slave_pos
  last_gtid gtid_next session_track_gtids pseudo_thread_id timestamp
`));

/** True when reading `@@name` (with any @@session./@@global. prefix) depends on connection state. */
export function isStateSystemVariable(variable: string): boolean {
  const name = variable.replace(/^@@/, '').replace(/^(session|global|local)\./i, '').toLowerCase();
  return STATE_SYSTEM_VARIABLES.has(name);
}
