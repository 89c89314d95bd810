#!/usr/bin/env bash
# The system programs the tests drive for real: Debian's Chromium (the browser tests), a Java 17+ runtime
# (`neardup spark` on a local JVM) and wget (the WARC test crawls a local site with it).
# As root it installs what is missing with apt-get; otherwise it names what to install and exits 1.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
command -v wget >/dev/null 2>&1 || missing+=(wget)

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "neardup tests need: ${missing[*]} (Debian package names). Install them, e.g.: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
