#!/usr/bin/env bats
# tests/contracts.bats: the contract between bash and Go holds. Decisions
# read codes, never words of a human message; constants come from Go; the
# plan command answers bad input with one line and exit 2. Fast: no lab.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# Go code (tests excluded) that matches a substring of a message to decide:
# strings.Contains/HasPrefix/HasSuffix/Index on an error, reason, refusal,
# message, note, verdict or evidence, an error's text compared, or a value
# compared with a note's sentence (a *Note constant).
go_prose_pattern='strings\.(Contains|HasPrefix|HasSuffix|Index|EqualFold)\((\*?[A-Za-z_.]*([Ee]rr|[Ee]rror\(\)|[Rr]eason|[Rr]efusal|[Mm]sg|[Mm]essage|[Nn]ote|Evidence|Bound|[Ww]hy|errText)[A-Za-z_.]*)[,)]|MatchString\([^)]*([Ee]rr|[Rr]eason|[Rr]efusal|[Mm]sg|[Mm]essage)|\.Error\(\) *[!=]=|[!=]= *[A-Za-z0-9_.]*Note\b'

# Bash that decides by words of a message or a progress line: [[ VAR ==
# *"..."* ]] on a message-like variable, or grep -q on a log that is not a
# JSON event line.
bash_prose_pattern='\[\[ *"?\$\{?(why|msg|message|reason|refusal|err|error|out|output|line|text|log|C10K_REFUSAL)[}"]* *[!=]= *\*|grep -q[A-Za-z]* [^|]*(\.log|_LOG)'

go_files() { git ls-files 'internal/*.go' 'cmd/*.go' | grep -v '_test\.go$'; }
bash_files() { git ls-files 'lib/*.sh' '0*/*.sh' 'lab/*.sh' 'rehearsal/*.sh' 'scripts/*.sh'; }

@test "no Go code decides by a substring of a human message" {
  local hits
  hits=$(go_files | xargs grep -nE "${go_prose_pattern}" || true)
  if [[ -n "${hits}" ]]; then
    echo "decide by a code, not by words of a message:"
    echo "${hits}"
    return 1
  fi
  # The pattern finds what it is meant to find.
  printf '%s\n' 'if strings.Contains(errText, "fd limit") {' 'strings.Contains(c.Error, "x")' \
    'if err.Error() == "EOF" {' 'if n == phase2.StandInNote {' >"${BATS_TEST_TMPDIR}/bad.go"
  [ "$(grep -cE "${go_prose_pattern}" "${BATS_TEST_TMPDIR}/bad.go")" -eq 4 ]
}

# A verdict's bound and evidence are words for the report (docs/verdicts.md):
# compared, switched on or used as a key they are a decision.
verdict_prose_pattern='Verdict\.(Bound|Evidence) *[!=]=|switch [^{]*Verdict\.(Bound|Evidence)|\[[^]]*Verdict\.(Bound|Evidence)\]'

@test "no Go code decides by a verdict's words" {
  local hits
  hits=$(go_files | xargs grep -nE "${verdict_prose_pattern}" || true)
  if [[ -n "${hits}" ]]; then
    echo "decide by the verdict's code (Verdict.Code), not by its bound or evidence:"
    echo "${hits}"
    return 1
  fi
  printf '%s\n' 'if c.Verdict.Bound == "link" {' 'switch c.Verdict.Bound {' 'i, ok := idx[c.Verdict.Bound]' \
    'rows = append(rows, c.Verdict.Bound)' >"${BATS_TEST_TMPDIR}/bad.go"
  [ "$(grep -cE "${verdict_prose_pattern}" "${BATS_TEST_TMPDIR}/bad.go")" -eq 3 ]
}

@test "no bash code decides by words of a message or a progress line" {
  local hits
  hits=$(bash_files | xargs grep -nE "${bash_prose_pattern}" | grep -v 'EVENT_PREFIX\|EVENT_[A-Z]*}' || true)
  if [[ -n "${hits}" ]]; then
    echo "decide by a code or a JSON event, not by words of a message:"
    echo "${hits}"
    return 1
  fi
  # shellcheck disable=SC2016 # the samples are code, not expanded
  printf '%s\n' '[[ "${why}" == *"fd limit"* ]]' 'grep -q "^hold " "${C10K_CLIENT_LOG[i]}"' \
    '[[ $output == *"refused"* ]]' >"${BATS_TEST_TMPDIR}/bad.sh"
  [ "$(grep -cE "${bash_prose_pattern}" "${BATS_TEST_TMPDIR}/bad.sh")" -eq 3 ]
}

@test "bash takes its shared constants from Go (lib/constants.sh is current; no copy in lib/)" {
  make -s build >/dev/null
  diff <(bin/csb constants -sh) lib/constants.sh
  run bin/csb constants
  [ "$status" -eq 0 ]
  [[ "${lines[*]}" == *"C10K_FD_MARGIN=64"* ]]
  # No Phase 3 planning constant, fd margin or size unit defined in bash.
  # No size parser, payload pattern or event name copied into bash either.
  local f files=()
  for f in lib/*.sh 0*/*.sh; do [[ "${f}" == lib/constants.sh ]] || files+=("${f}"); done
  run grep -nE '^[[:space:]]*(declare -[gA]+ )?(C10K_[A-Z_]*(MARGIN|SLACK|KB_PER_CONN)|CSB_FD_MARGIN|CSB_SIZE_[KM]|CSB_SIZE_MAX_BYTES|CSB_PAYLOAD_LINE|CSB_WRK_JSON_PREFIX)=|^csb_size_(bytes|name)\(\)|"listening"' \
    "${files[@]}"
  [ "$status" -eq 1 ]
  # shellcheck source=lib/constants.sh
  source lib/constants.sh
  [ "${CSB_WRK_JSON_PREFIX}" = "CSB_WRK_JSON " ]
  [ "${CSB_SERVER_EVENT_LISTENING}" = listening ]
  [ "${#CSB_PAYLOAD_LINE}" -eq 63 ]
}

@test "csb c10k-plan: codes for people and machines; unreadable facts are not 0; bad usage exits 2" {
  make -s build >/dev/null
  local d=internal/c10kplan/testdata
  local -a base=(-lab netns -server-ip 198.18.0.1 -server-port 8080 -client-ip 198.18.0.2 -client-nic csbc0
    -tw-threshold 500 -connect-rate 1000 -server-facts "${d}/limits.server.env")
  run bin/csb c10k-plan "${base[@]}" -client-facts "${d}/limits.client.env" -kind active -conns 2000 \
    -out "${BATS_TEST_TMPDIR}/p.json"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == ok=0 ]]
  [[ "${lines[1]}" == code=fd_limit ]]
  jq -e '.schema_version == 1 and .refusals[0].code == "fd_limit" and .refusals[0].setting != ""' "${BATS_TEST_TMPDIR}/p.json"

  # A non-root user may read an empty fs.file-nr: unreadable, not 0.
  { grep -v '^fs.file-nr=' "${d}/limits.client.env"; echo 'fs.file-nr='; } >"${BATS_TEST_TMPDIR}/cli.env"
  run bin/csb c10k-plan "${base[@]}" -client-facts "${BATS_TEST_TMPDIR}/cli.env" -kind idle -conns 800 \
    -out "${BATS_TEST_TMPDIR}/q.json"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == ok=1 ]]
  jq -e '.facts.client.files_max == "unreadable" and (.notes | any(test("fs.file-nr was unreadable")))' "${BATS_TEST_TMPDIR}/q.json"

  run bin/csb c10k-plan "${base[@]}" -client-facts "${d}/limits.client.env" -kind bogus -conns 1
  [ "$status" -eq 2 ]
  [[ "${lines[0]}" == 'error: usage: c10k-plan: -kind "bogus": want idle, lowrate or active' ]]
}
