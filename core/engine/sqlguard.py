"""The statement and function allow-lists every candidate passes before it reaches a database.

``check_query`` accepts exactly one SELECT / WITH / set operation, refuses every write, PRAGMA,
ATTACH, transaction or ``INTO`` anywhere in the tree, and refuses every function call outside an
allow-list of pure functions (``pg_read_file``, ``pg_terminate_backend``, ``pg_advisory_lock``,
``lo_import``, ``dblink``, ``load_extension``, ``nextval``, ``set_config``, ``pg_sleep``, …).

Functions sqlglot types as standard SQL (``Count``, ``Upper``, ``Substring``, …) are pure, except
the few typed classes in ``_TYPED_DENIED`` (file readers, sequences, AI/ML calls). Functions it
does not know (``exp.Anonymous``) must be named in ``PURE_FUNCTIONS``. A schema-qualified call
(``pg_catalog.upper(x)``) is refused, and a scan of sqlglot's tokens refuses the server-side
names in ``_DENIED_PREFIXES`` wherever a name token is followed by ``(``, whatever node it
parses to; the text of string literals and comments is never read as a call
(``WHERE title = 'version()'`` is a title).

Candidate SQL reads only the task database's own tables (:func:`check_tables`): functions that
describe the server or the session (``version()``, ``current_user``, ``current_database()``,
``sqlite_version()``, ``inet_server_addr()``, …), system catalogs and views (``pg_*``,
``information_schema.*``, ``sqlite_master``, ``pragma_*`` table-valued functions, ``dbstat``),
tables of another schema than ``public`` / ``main`` and casts to catalog types (``::regclass``)
are refused with one message naming what was refused.

The check runs in the app process, so it is bounded before any regex or parser sees the text
(:func:`parse_bounded`): at most ``MAX_SQL_CHARS`` characters, ``MAX_SQL_TOKENS`` tokens and
``MAX_NESTING`` levels of parentheses / CASE, regexes that cannot backtrack, and a
``RecursionError`` inside sqlglot becomes an :class:`UnsafeQueryError` like any other refusal.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from core.engine.errors import UnsafeQueryError

_ALLOWED_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)
_FORBIDDEN = (
    exp.Insert, exp.Update, exp.Delete, exp.Drop, exp.Create, exp.Alter, exp.Command,
    exp.Pragma, exp.Attach, exp.Detach, exp.Merge, exp.TruncateTable, exp.Set, exp.Transaction,
    exp.Commit, exp.Rollback, exp.Into,
)

_TYPED_DENIED = frozenset({
    "ReadCSV", "ReadParquet", "NextValueFor", "ToFile", "Secret", "Predict", "GenerateEmbedding",
    "GenerateText", "GenerateTable", "FeaturesAtTime", "VectorSearch", "Search", "SearchIp",
    "MLForecast", "MLTranslate", "CurrentIpAddress",
})
_TYPED_DENIED_PREFIXES = ("AI",)
# Typed functions that describe the server, the session or the account, not the task's data.
_SERVER_INFO = frozenset({
    "CurrentVersion", "CurrentUser", "SessionUser", "CurrentDatabase", "CurrentSchema",
    "CurrentSchemas", "CurrentCatalog", "CurrentRole", "CurrentRoleType", "CurrentAvailableRoles",
    "CurrentSecondaryRoles", "CurrentAccount", "CurrentAccountName", "CurrentClient",
    "CurrentOrganizationName", "CurrentOrganizationUser", "CurrentRegion", "CurrentSession",
    "CurrentStatement", "CurrentTransaction", "CurrentUserId", "CurrentWarehouse",
    "CurrentIpAddress",
})
# PostgreSQL's SQL-standard session functions written without parentheses parse as columns.
_BARE_SESSION_WORDS = frozenset({
    "user", "current_user", "session_user", "system_user", "current_role", "current_catalog",
    "current_schema",
})
# Server-information functions by name, wherever ``name(`` appears (sqlglot may type them).
_SERVER_FUNCTIONS = re.compile(
    r"^(version|current_setting|sqlite_version|sqlite_source_id|sqlite_compileoption_used|"
    r"sqlite_compileoption_get|sqlite_offset|inet_server_addr|inet_server_port|inet_client_addr|"
    r"inet_client_port|current_user|session_user|system_user|current_role|current_database|"
    r"current_catalog|current_schema|current_schemas|current_query|has_\w*_privilege|"
    r"obj_description|col_description|shobj_description|format_type|to_reg\w*)$", re.I)
# Catalog tables and views of PostgreSQL and SQLite, refused by name in FROM / JOIN.
_CATALOG_TABLE = re.compile(r"^(pg_|sqlite_|pragma_)|^(dbstat|information_schema)$", re.I)
_OWN_SCHEMAS = frozenset({"", "public", "main"})  # a task's tables live in these
_ONLY_OWN = "candidate SQL may only read the task database's own tables"

# Pure functions sqlglot parses as exp.Anonymous, in SQLite and PostgreSQL (lower case).
_PURE_TEXT = """
abs acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10
log2 mod pi pow power radians sign sin sinh sqrt cbrt tan tanh trunc div gcd lcm width_bucket
char glob hex ifnull iif instr length like likelihood likely lower ltrim max min nullif
octet_length printf quote random randomblob replace round rtrim soundex substr substring trim
typeof unhex unicode unlikely upper zeroblob coalesce format concat concat_ws
date time datetime julianday unixepoch strftime timediff
avg count group_concat string_agg sum total
row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
json json_array json_array_length json_extract json_insert json_object json_patch json_remove
json_replace json_set json_type json_valid json_quote json_group_array json_group_object
json_each json_tree generate_series
to_char to_date to_timestamp to_number date_part date_trunc age make_date make_time
make_timestamp make_interval justify_days justify_hours justify_interval isfinite
array_agg array_length array_to_string string_to_array array_position array_remove array_append
array_cat array_dims array_lower array_upper cardinality unnest
split_part regexp_replace regexp_match regexp_matches regexp_split_to_array regexp_like
regexp_count regexp_substr regexp_instr strpos position btrim lpad rpad repeat initcap left right
char_length character_length reverse translate md5 chr ascii to_hex encode decode
quote_ident quote_literal quote_nullable starts_with
greatest least bool_and bool_or every bit_and bit_or stddev stddev_pop stddev_samp variance
var_pop var_samp corr covar_pop covar_samp regr_slope regr_intercept percentile_cont
percentile_disc mode
json_agg jsonb_agg json_build_object jsonb_build_object json_build_array jsonb_build_array
row_to_json to_json to_jsonb json_object_agg jsonb_object_agg json_array_elements
jsonb_array_elements json_extract_path jsonb_extract_path json_extract_path_text
jsonb_extract_path_text jsonb_typeof json_typeof
int2 int4 int8 float4 float8 numeric text varchar bool
"""
PURE_FUNCTIONS = frozenset(_PURE_TEXT.split())

# Server-side families refused wherever a name token is followed by ``(``, even if sqlglot
# types the call.
_DENIED_PREFIXES = re.compile(
    r"^(pg_|lo_|dblink|load_extension|fts3|set_config|current_setting|nextval|setval|currval|"
    r"lastval|txid_|query_to_xml|table_to_xml|cursor_to_xml|readfile|writefile|edit$)", re.I)


MAX_SQL_CHARS = 50_000  # candidate SQL is a few hundred characters; the worker's cap is 1 MB
MAX_SQL_TOKENS = 5_000  # sqlglot's AST costs ~680 MB per MB of token-dense SQL
MAX_NESTING = 30  # parentheses / CASE inside each other; sqlglot recurses per level

_MAX_FORMAT_WIDTH = 10_000
_FORMAT_SPEC = re.compile(r"%[-+ #0,!]*+(\*|\d*+)(?:\.(\*|\d*+))?")
# A linear first count of tokens (a quoted string, a word or one symbol each), so token-dense
# text over the bound is refused before sqlglot's slower tokenizer runs over all of it.
_ROUGH_TOKEN = re.compile(r"""'[^']*+'|"[^"]*+"|`[^`]*+`|[\w$]++|[^\s\w$]""")
_OPEN = frozenset({"L_PAREN", "CASE"})
_NOT_NAMES = frozenset({TokenType.NUMBER, TokenType.L_PAREN, TokenType.R_PAREN,
                        TokenType.COMMA, TokenType.DOT})
_CLOSE = frozenset({"R_PAREN", "END"})


def _check_printf(node: exp.Func, dialect: str) -> None:
    """SQLite's printf/format pads in a loop the interrupt cannot stop (``%.*c`` with 9e8 ran
    21 s in one VM step): the format must be a literal, with widths of at most 10 000, no ``*``."""
    args = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
    fmt = args[0] if args else None
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise UnsafeQueryError(f"{_call_name(node)}() needs a literal format string here")
    for width, precision in _FORMAT_SPEC.findall(fmt.this):
        for part in (width, precision):
            if part == "*" or (part and (len(part) > 6 or int(part) > _MAX_FORMAT_WIDTH)):
                raise UnsafeQueryError(
                    f"{_call_name(node)}() widths and precisions must be numbers up to "
                    f"{_MAX_FORMAT_WIDTH} written in the format (not '*')")


def _call_name(node: exp.Func) -> str:
    """The name a function call was written with (lower case) or sqlglot's class name."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def check_functions(tree: exp.Expression, tokens: list[Token], dialect: str) -> None:
    """Refuse every call outside the pure-function allow-list (see the module docstring);
    ``tokens`` are the statement's tokens, whose calls are checked by name as well."""
    for node in tree.walk():
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            raise UnsafeQueryError(
                f"the schema-qualified function call '{node.sql(dialect)[:60]}' is not allowed; "
                "call the function without a schema")
        if not isinstance(node, exp.Func):
            continue
        if dialect == "sqlite" and (isinstance(node, exp.Format) or (
                isinstance(node, exp.Anonymous) and _call_name(node) == "printf")):
            _check_printf(node, dialect)
        if isinstance(node, exp.Anonymous):
            name = _call_name(node)
            if _SERVER_FUNCTIONS.match(name):
                raise UnsafeQueryError(_server_info(f"{name}()"))
            if name.startswith("pragma_"):  # SQLite's PRAGMA as a table-valued function
                raise UnsafeQueryError(f"the system catalog {name}() is refused; {_ONLY_OWN}")
            if name not in PURE_FUNCTIONS:
                raise UnsafeQueryError(
                    f"the function {name}() is not on the allow-list of pure functions "
                    "candidate SQL may call")
        else:
            cls = type(node).__name__
            if cls in _SERVER_INFO:
                raise UnsafeQueryError(_server_info(node.sql(dialect)[:60]))
            if cls in _TYPED_DENIED or cls.startswith(_TYPED_DENIED_PREFIXES):
                raise UnsafeQueryError(
                    f"the function {_call_name(node)}() is not on the allow-list of pure "
                    "functions candidate SQL may call")
    for name in called_names(tokens):
        if _SERVER_FUNCTIONS.match(name):
            raise UnsafeQueryError(_server_info(f"{name.lower()}()"))
        if _DENIED_PREFIXES.match(name):
            raise UnsafeQueryError(
                f"the function {name.lower()}() is not on the allow-list of pure functions "
                "candidate SQL may call")


def called_names(tokens: list[Token]) -> list[str]:
    """Every name written as a call: a word, keyword or quoted identifier token followed by
    ``(``. String literals are single tokens and comments none, so their text is never a call;
    one pass over the (bounded) tokens."""
    return [tok.text for tok, nxt in zip(tokens, tokens[1:], strict=False)
            if nxt.token_type == TokenType.L_PAREN and tok.token_type not in _NOT_NAMES
            and not tok.token_type.name.endswith("STRING")]


def _server_info(what: str) -> str:
    """The one refusal of a server- or session-information function."""
    return (f"{what} is refused: it describes the database server or session, not the task's "
            f"data; {_ONLY_OWN}")


def check_tables(tree: exp.Expression, dialect: str) -> None:
    """Refuse system catalogs, other schemas, catalog casts and bare session words, so candidate
    SQL reads only the task database's own tables (see the module docstring)."""
    for node in tree.walk():
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            schema, name = str(node.db or ""), str(node.name)
            written = ".".join(p for p in (str(node.catalog or ""), schema, name) if p)[:80]
            if _CATALOG_TABLE.match(name) or _CATALOG_TABLE.match(schema) or \
                    schema.lower().startswith("pg_"):
                raise UnsafeQueryError(f"the system catalog '{written}' is refused; {_ONLY_OWN}")
            if schema.lower() not in _OWN_SCHEMAS or node.catalog:
                raise UnsafeQueryError(
                    f"the table '{written}' is in another schema or database; "
                    f"{_ONLY_OWN} (write the table name without a schema)")
        elif isinstance(node, exp.DataType) and str(node.this).upper().startswith(
                ("REG", "TYPE.REG")):
            raise UnsafeQueryError(
                f"the cast to '{node.sql(dialect)}' reads the system catalogs and is refused; "
                f"{_ONLY_OWN}")
        elif (dialect == "postgres" and isinstance(node, exp.Column) and not node.table
              and isinstance(node.this, exp.Identifier) and not node.this.quoted
              and node.name.lower() in _BARE_SESSION_WORDS):
            raise UnsafeQueryError(_server_info(node.name.lower()))


def parse_bounded(sql: str, dialect: str = "sqlite") -> list[exp.Expr]:
    """Parse untrusted SQL within the size, token and nesting bounds (module docstring).

    Every refusal and every parser failure, a ``RecursionError`` included, is raised as
    :class:`UnsafeQueryError` naming the bound; the length is checked before anything reads
    the text, the tokens before the parser builds a tree.
    """
    return _parse_tokens(sql, dialect)[1]


def _parse_tokens(sql: str, dialect: str) -> tuple[list[Token], list[exp.Expr]]:
    """:func:`parse_bounded` that also returns the tokens it parsed (for the call scan)."""
    if not isinstance(sql, str) or not sql.strip():
        raise UnsafeQueryError("empty SQL: write one SELECT statement")
    if len(sql) > MAX_SQL_CHARS:
        raise UnsafeQueryError(
            f"the SQL is {len(sql):,} characters long; at most {MAX_SQL_CHARS:,} are checked")
    rough = sum(1 for _ in _ROUGH_TOKEN.finditer(sql))
    if rough > MAX_SQL_TOKENS:
        raise UnsafeQueryError(
            f"the SQL has about {rough:,} tokens; at most {MAX_SQL_TOKENS:,} are parsed")
    try:
        engine = sqlglot.Dialect.get_or_raise(dialect)
        tokens = engine.tokenize(sql)
        if len(tokens) > MAX_SQL_TOKENS:
            raise UnsafeQueryError(
                f"the SQL has {len(tokens):,} tokens; at most {MAX_SQL_TOKENS:,} are parsed")
        depth = deepest = 0
        for token in tokens:
            kind = token.token_type.name
            if kind in _OPEN:
                depth += 1
                deepest = max(deepest, depth)
            elif kind in _CLOSE:
                depth -= 1
        if deepest > MAX_NESTING:
            raise UnsafeQueryError(
                f"the SQL nests parentheses or CASE {deepest} deep; at most {MAX_NESTING} levels "
                "are parsed")
        return tokens, [s for s in engine.parser().parse(tokens, sql) if s is not None]
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0]["description"] if exc.errors else str(exc)
        raise UnsafeQueryError(f"SQL does not parse ({first})") from None
    except sqlglot.errors.TokenError as exc:
        raise UnsafeQueryError(f"SQL does not parse ({exc})") from None
    except RecursionError:
        raise UnsafeQueryError(
            "the SQL nests too deeply for the parser; write it with fewer levels") from None


def _only_statement(statements: list[exp.Expr]) -> exp.Expr:
    """The one statement parsed, or :class:`UnsafeQueryError` saying how many there were."""
    if len(statements) != 1:
        raise UnsafeQueryError(
            f"{len(statements)} statements found; exactly one SELECT / WITH query is allowed")
    return statements[0]


def parse_one_bounded(sql: str, dialect: str = "sqlite") -> exp.Expression:
    """The single statement of ``sql`` parsed by :func:`parse_bounded` (features, atoms)."""
    tree = _only_statement(parse_bounded(sql, dialect))
    if not isinstance(tree, exp.Expression):  # sqlglot's parser builds Expressions
        raise UnsafeQueryError(f"SQL does not parse into a statement ({type(tree).__name__})")
    return tree


def check_query(sql: str, dialect: str = "sqlite") -> exp.Expression:
    """Parse ``sql`` and return its AST if it is exactly one read-only query of pure functions.

    Raises :class:`UnsafeQueryError` naming what was refused (PRAGMA, ATTACH, DDL, DML, several
    statements, a function outside the allow-list, server information, a system catalog or
    another schema's table, or unparsable text).
    """
    tokens, statements = _parse_tokens(sql, dialect)
    tree = _only_statement(statements)
    if not isinstance(tree, _ALLOWED_ROOTS):
        raise UnsafeQueryError(
            f"only SELECT, WITH and set operations may run; this is {type(tree).__name__.upper()}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN):
            raise UnsafeQueryError(
                f"{type(node).__name__.upper()} is not allowed inside a candidate query")
    check_functions(tree, tokens, dialect)
    check_tables(tree, dialect)
    return tree
