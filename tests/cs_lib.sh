# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# CrowdSec's local API alone (crowdsec -no-cs), with a private config,
# database and credentials, on the loopback of a namespace: for
# tests/crowdsec.sh and the bench's crowdsec stage. Source after
# tests/lib.sh and tests/ban_lib.sh (wait_for).
#   cs_start NS DIR PORT   config in DIR, a machine and a bouncer (its key
#                          in DIR/key), the LAPI started (its pid in CS_PID)
#                          and answering; on failure prints why, returns 1
#   cscli_ ARGS            cscli on that config, in that namespace

cscli_() { in_ns "$CS_NS" cscli -c "$CS/config.yaml" "$@"; }

cs_start() {
	local port=$3 out
	CS_NS=$1
	CS=$2
	mkdir -p "$CS/data" "$CS/hub" "$CS/log"
	cat >"$CS/config.yaml" <<EOF
common:
  daemonize: false
  log_media: file
  log_level: info
  log_dir: $CS/log
  working_dir: .
config_paths:
  config_dir: $CS/
  data_dir: $CS/data/
  simulation_path: $CS/simulation.yaml
  hub_dir: $CS/hub/
  index_path: $CS/hub/.index.json
  notification_dir: $CS/notifications/
  plugin_dir: /usr/lib/crowdsec/plugins/
db_config:
  log_level: info
  type: sqlite
  db_path: $CS/data/crowdsec.db
  use_wal: false
api:
  client:
    credentials_path: $CS/local_api_credentials.yaml
  server:
    log_level: info
    listen_uri: 127.0.0.1:$port
    profiles_path: /etc/crowdsec/profiles.yaml
    trusted_ips:
      - 127.0.0.1
prometheus:
  enabled: false
EOF
	echo "simulation: off" >"$CS/simulation.yaml"
	if ! out=$(cscli_ machines add weir-test --auto -f "$CS/local_api_credentials.yaml" 2>&1) ||
		! cscli_ bouncers add weir-test -o raw >"$CS/key" 2>"$CS/cscli.err"; then
		echo "cscli: $out $(cat "$CS/cscli.err")"
		return 1
	fi
	nsenter --net="/run/netns/$CS_NS" crowdsec -c "$CS/config.yaml" -no-cs >"$CS/cs.out" 2>&1 &
	CS_PID=$!
	if ! wait_for 30 sh -c "nsenter --net=/run/netns/$CS_NS curl -s -o /dev/null -m 2 \
		http://127.0.0.1:$port/v1/decisions/stream"; then
		echo "the local API did not answer: $(tail -5 "$CS/cs.out" "$CS/log/crowdsec_api.log" 2>&1 |
			tr '\n' ' ')"
		return 1
	fi
}
