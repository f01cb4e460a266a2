#!/usr/bin/env bash
# deploy/prometheus/alerts.yml: valid rules (promtool check rules), and each alert fires on the
# series that should trigger it and not on those that must not (promtool test rules).
set -u
command -v promtool >/dev/null || { echo "SKIP: promtool not installed"; exit 77; }
DIR="$(cd "$(dirname "$0")/../../deploy/prometheus" && pwd)"
promtool check rules "$DIR/alerts.yml" || exit 1
cd "$DIR" && promtool test rules alerts_test.yml
