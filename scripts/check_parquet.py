#!/usr/bin/env python3
"""Independent reader check of the coordinator's Parquet files, with pyarrow.

Usage: check_parquet.py FILE.parquet [FILE.parquet ...]

Checks, against the schema documented in coordinator/src/rows.rs (version 1):
  * the exact columns, in order, with their Arrow types, every one non-nullable and null-free;
  * the key/value metadata: zeroplay.schema_version == "1", zeroplay.engine_version set, and
    zeroplay.encoding.<kind> for every game kind in the file, equal to its encoding_version
    column (in the file footer and on the Arrow schema);
  * row invariants: game_id is 32 lowercase hex digits; each game lies in one file and its ply
    column is 0..len exactly once; per-game fields are constant; visit_actions and visit_counts
    have the same length and no null items; result in {-1, 0, 1}; actor in {0, 1, 2};
    root_value in [-1, 1]; state starts with the game's magic (b"BN" for battlenumber).

Prints one summary line (files, games, rows, and repeated_moves: games whose moves from their
start position equal another game's, i.e. one game stored twice) and exits 0, or prints every problem found (up to a limit) to stderr
and exits 1. Exit 2: bad usage or pyarrow missing.
"""

import math
import os
import re
import sys

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as e:  # pragma: no cover - depends on the environment
    sys.stderr.write(
        f"check_parquet: cannot import pyarrow ({e}); run scripts/setup-test-tools.sh and use the "
        "Python it prints\n"
    )
    sys.exit(2)

SCHEMA_VERSION = "1"

# (name, Arrow type) in file order; every column is non-nullable.
COLUMNS = [
    ("game_id", pa.string()),
    ("game_kind", pa.string()),
    ("seed", pa.uint64()),
    ("engine_version", pa.string()),
    ("encoding_version", pa.uint32()),
    ("model_version", pa.uint64()),
    ("ply", pa.uint32()),
    ("actor", pa.uint8()),
    ("state", pa.binary()),
    ("action", pa.string()),
    ("visit_actions", pa.list_(pa.string())),
    ("visit_counts", pa.list_(pa.uint32())),
    ("root_value", pa.float32()),
    ("full_search", pa.bool_()),
    ("result", pa.int8()),
    ("score", pa.int32()),
    ("decisive", pa.bool_()),
    ("resigned", pa.bool_()),
    ("would_resign_seat", pa.int8()),
]

# State encoding magic per game kind (Game::encode's first two bytes).
MAGIC = {"battlenumber": b"BN"}

# Fields that are the same on every row of one game.
PER_GAME = ["game_kind", "seed", "engine_version", "encoding_version", "decisive", "resigned", "would_resign_seat"]

GAME_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_ERRORS = 30


class Problems:
    def __init__(self):
        self.items = []
        self.count = 0

    def add(self, where, msg):
        self.count += 1
        if len(self.items) < MAX_ERRORS:
            self.items.append(f"{where}: {msg}")


def same_type(actual, expected):
    """Arrow type equality that ignores the name of a list's item field."""
    if pa.types.is_list(expected):
        return pa.types.is_list(actual) and actual.value_type == expected.value_type
    return actual == expected


def check_metadata(path, kv, kinds, where, problems):
    if kv is None:
        problems.add(path, f"no key/value metadata in the {where}")
        return
    meta = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in kv.items()}
    if meta.get("zeroplay.schema_version") != SCHEMA_VERSION:
        problems.add(
            path,
            f"{where}: zeroplay.schema_version is {meta.get('zeroplay.schema_version')!r}, "
            f"expected {SCHEMA_VERSION!r}",
        )
    if not meta.get("zeroplay.engine_version"):
        problems.add(path, f"{where}: zeroplay.engine_version missing or empty")
    for kind, versions in kinds.items():
        key = f"zeroplay.encoding.{kind}"
        if key not in meta:
            problems.add(path, f"{where}: {key} missing (the file holds {kind} rows)")
        elif {str(v) for v in versions} != {meta[key]}:
            problems.add(path, f"{where}: {key} is {meta[key]!r} but encoding_version has {sorted(versions)}")


def check_file(path, problems, games):
    """Checks one file; adds its games to `games` (game_id -> [path, plies, per-game values])."""
    before = problems.count
    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
        table = pf.read()
    except Exception as e:  # noqa: BLE001 - any reader failure is a finding
        problems.add(path, f"cannot read as Parquet: {e}")
        return 0

    names = [f.name for f in schema]
    expected_names = [n for n, _ in COLUMNS]
    if names != expected_names:
        problems.add(path, f"columns are {names}, expected {expected_names}")
        return 0
    for name, typ in COLUMNS:
        field = schema.field(name)
        if not same_type(field.type, typ):
            problems.add(path, f"column {name} has type {field.type}, expected {typ}")
        if field.nullable:
            problems.add(path, f"column {name} is nullable, expected non-null")
        if table.column(name).null_count:
            problems.add(path, f"column {name} holds {table.column(name).null_count} nulls")
    if problems.count > before:
        return table.num_rows

    cols = {name: table.column(name).to_pylist() for name, _ in COLUMNS}
    kinds = {}
    for kind, version in zip(cols["game_kind"], cols["encoding_version"]):
        kinds.setdefault(kind, set()).add(version)
    check_metadata(path, pf.metadata.metadata, kinds, "file footer", problems)
    check_metadata(path, schema.metadata, kinds, "Arrow schema", problems)

    local = {}
    for i in range(table.num_rows):
        gid = cols["game_id"][i]
        where = f"{path}: row {i} (game {gid}, ply {cols['ply'][i]})"
        if not GAME_ID.match(gid):
            problems.add(where, "game_id is not 32 lowercase hex digits")
        kind = cols["game_kind"][i]
        magic = MAGIC.get(kind)
        if magic is None:
            problems.add(where, f"unknown game_kind {kind!r}")
        elif not cols["state"][i].startswith(magic):
            problems.add(where, f"state starts with {cols['state'][i][:2]!r}, expected {magic!r}")
        va, vc = cols["visit_actions"][i], cols["visit_counts"][i]
        if len(va) != len(vc):
            problems.add(where, f"visit_actions has {len(va)} items but visit_counts {len(vc)}")
        if any(x is None for x in va) or any(x is None for x in vc):
            problems.add(where, "null item in visit_actions or visit_counts")
        if cols["result"][i] not in (-1, 0, 1):
            problems.add(where, f"result {cols['result'][i]} not in {{-1, 0, 1}}")
        if cols["actor"][i] not in (0, 1, 2):
            problems.add(where, f"actor {cols['actor'][i]} not in {{0, 1, 2}}")
        rv = cols["root_value"][i]
        if not (math.isfinite(rv) and -1.0 <= rv <= 1.0):
            problems.add(where, f"root_value {rv} outside [-1, 1]")
        if not cols["action"][i]:
            problems.add(where, "empty action")
        values = tuple(cols[c][i] for c in PER_GAME)
        entry = local.setdefault(gid, [[], values, [], b""])
        entry[0].append(cols["ply"][i])
        entry[2].append((cols["ply"][i], cols["action"][i], cols["actor"][i] == 2))
        if cols["ply"][i] == 0:
            entry[3] = cols["state"][i]
        if entry[1] != values:
            problems.add(where, f"per-game fields {PER_GAME} changed within the game: {entry[1]} vs {values}")

    for gid, (plies, values, moves, start) in local.items():
        if gid in games:
            problems.add(path, f"game {gid} also has rows in {games[gid][0]}")
            continue
        if sorted(plies) != list(range(len(plies))):
            missing = sorted(set(range(max(plies) + 1)) - set(plies))[:5]
            dups = sorted({p for p in plies if plies.count(p) > 1})[:5]
            problems.add(
                path,
                f"game {gid}: its {len(plies)} plies are not 0..{len(plies) - 1} once each "
                f"(first missing {missing}, repeated {dups}, min {min(plies)}, max {max(plies)})",
            )
        # The game's moves from its start: two games with the same are one game stored twice.
        sequence = (values[0], start, tuple((a, c) for _, a, c in sorted(moves)))
        games[gid] = (path, len(plies), values, sequence)
    return table.num_rows


def main(argv):
    if len(argv) < 2 or any(a in ("-h", "--help") for a in argv[1:]):
        sys.stderr.write(__doc__)
        return 2
    problems = Problems()
    games = {}
    rows = 0
    for path in argv[1:]:
        rows += check_file(path, problems, games)
    if problems.count:
        sys.stderr.write(f"check_parquet: {problems.count} problem(s) in {len(argv) - 1} file(s):\n")
        for p in problems.items:
            sys.stderr.write(f"  {p}\n")
        if problems.count > len(problems.items):
            sys.stderr.write(f"  ... and {problems.count - len(problems.items)} more\n")
        return 1
    engines = sorted({v[2][2] for v in games.values()})
    repeated = len(games) - len({v[3] for v in games.values()})
    print(
        f"check_parquet: ok: files={len(argv) - 1} games={len(games)} rows={rows} repeated_moves={repeated} "
        f"schema_version={SCHEMA_VERSION} engine_versions={','.join(engines)} pyarrow={pa.__version__}"
    )
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    # pyarrow's native thread pools can abort the interpreter during its teardown
    # ("terminate called without an active exception", apache/arrow#34314). Everything
    # is written by now, so leave without the teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
