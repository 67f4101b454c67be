# tests/tap.bash: counts what bats ran, from its TAP output. Sourced by
# scripts/test.sh (make test's last lines) and loaded by tests/lib.bats.
#
# A test skipped for want of root is one whose skip reason begins "needs
# root" (need_root in tests/helpers.bash); every other skip is counted
# apart, so a green `make test` run without root is not read as a full one.

# tap_count: reads bats' TAP output on stdin (other lines, such as go
# test's or a failed test's "# ..." output, are ignored) and prints four
# numbers: passed failed skipped skipped-for-want-of-root. A file whose
# setup_file failed counts as one failure ("not ok N setup_file failed").
tap_count() {
  local line reason passed=0 failed=0 skipped=0 root=0
  local skip_re='^ok [0-9]+ .* # skip( +(.*))?$'
  while IFS= read -r line; do
    if [[ "${line}" =~ ^not\ ok\ [0-9]+ ]]; then
      failed=$((failed + 1))
    elif [[ "${line}" =~ ${skip_re} ]]; then
      skipped=$((skipped + 1))
      reason=${BASH_REMATCH[2]#(}
      [[ "${reason}" == "needs root"* ]] && root=$((root + 1))
    elif [[ "${line}" =~ ^ok\ [0-9]+\  ]]; then
      passed=$((passed + 1))
    fi
  done
  echo "${passed} ${failed} ${skipped} ${root}"
}

# tap_lines SECONDS STATUS: reads bats' TAP output on stdin and prints make
# test's last two lines: the counts, then the time, the status (ok or
# FAILED) and how many tests were skipped for want of root, and for any
# other reason.
#   tests: 402 passed, 0 failed, 37 skipped
#   == make test: 1050 s, ok; 439 tests, 37 skipped for want of root
tap_lines() {
  local passed failed skipped root other
  read -r passed failed skipped root < <(tap_count)
  other=$((skipped - root))
  echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
  printf '== make test: %s s, %s; %d tests, %d skipped for want of root' "$1" "$2" $((passed + failed + skipped)) "${root}"
  ((other == 0)) || printf ', %d for other reasons' "${other}"
  printf '\n'
}
