#!/usr/bin/env bash
# Usage: scripts/intent-diff.sh BASE_REF OUTPUT_MD
#
# For every intent under intents/ (in the working tree or at BASE_REF), run
#   fabricgen diff intents/X.yaml@BASE_REF intents/X.yaml --format markdown
# and write all of them into OUTPUT_MD as one pull-request comment. Run from the repository's top
# level. FABRICGEN names the command (default: fabricgen on PATH); FABRICGEN_CATALOG_DIRS, a
# colon-separated list, names directories outside intents/ that catalog files may come from
# (`--catalog-dir`).
#
# Exit status: 0 when every diff ran, whether it found changes (diff exit 1) or not (exit 0);
# 2 when any side could not be built or read (diff exit 2: the comment shows its report). The
# comment is written in every case, so a workflow can post it before failing.
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BASE_REF OUTPUT_MD" >&2
    exit 2
fi
base=$1
output=$2
fabricgen=${FABRICGEN:-fabricgen}
catalog_args=()
IFS=: read -r -a catalog_dirs <<< "${FABRICGEN_CATALOG_DIRS:-}"
for dir in "${catalog_dirs[@]}"; do
    [ -n "$dir" ] && catalog_args+=(--catalog-dir "$dir")
done
marker="<!-- fabricgen-intent-diff -->"
comment_limit=60000  # GitHub allows 65,536 characters in a comment

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# intents in the working tree and at the base (an intent deleted by the change is listed too)
{
    ls intents/*.yaml intents/*.yml 2>/dev/null
    git ls-tree --name-only "$base" -- intents/ 2>/dev/null | grep -E '\.ya?ml$'
} | sort -u > "$scratch/intents"
count=$(wc -l < "$scratch/intents")
# share the comment between the intents, but give each enough room for its summary tables
budget=$(( count > 0 ? comment_limit / count - 500 : comment_limit ))
[ "$budget" -lt 4000 ] && budget=4000

status=0
{
    echo "$marker"
    echo "## fabricgen: what this change does to the fabric"
    echo
    echo "Base: \`$base\`; $count intent(s) under \`intents/\`."
    echo
} > "$output"

while IFS= read -r intent; do
    if [ ! -f "$intent" ]; then
        printf '### `%s`: deleted by this change\n\n' "$intent" >> "$output"
        continue
    fi
    "$fabricgen" diff "$intent@$base" "$intent" "${catalog_args[@]}" --format markdown --max-bytes "$budget" > "$scratch/diff.md" 2> "$scratch/diff.err"
    rc=$?
    case $rc in
        0) printf '### `%s`: no change\n\n' "$intent" >> "$output" ;;
        1) cat "$scratch/diff.md" >> "$output"; echo >> "$output" ;;
        *)
            status=2
            # the report quotes the intent (keys, values): a fence longer than any run of
            # backticks in it, so a hostile intent cannot close the block and write markdown
            head -c 4000 "$scratch/diff.err" > "$scratch/diff.err.head"
            longest=$(grep -o '`\+' "$scratch/diff.err.head" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
            fence=$(printf '%*s' $(( longest >= 3 ? longest + 1 : 3 )) '' | tr ' ' '`')
            {
                printf '### `%s`: fabricgen diff failed (exit %s)\n\n%s\n' "$intent" "$rc" "$fence"
                cat "$scratch/diff.err.head"
                printf '%s\n\n' "$fence"
            } >> "$output"
            ;;
    esac
done < "$scratch/intents"

[ "$count" -eq 0 ] && echo "No intents under \`intents/\`." >> "$output"
exit $status
