# shellcheck shell=bash
# Secure Boot for the real image (sourced by scripts/real-image.sh; see
# docs/real-image.md "Secure Boot"): one db key signs the UKI (ingot
# build, recipe boot.secure-boot) and the NVIDIA modules (here), so the
# locked-down kernel, which trusts db (.platform) for modules, loads them.

# sb_keys DIR: sets SB_KEY and SB_CERT, the db key (unencrypted PEM RSA,
# read by the builder and by sign-file) and its PEM certificate.
# Production: INGOT_SB_KEY and INGOT_SB_CERT name the platform owner's db
# key and certificate (the firmware's db must hold that certificate).
# Otherwise the test key: OVMF's snakeoil db key (the one
# OVMF_VARS_4M.snakeoil.fd enrols; passphrase "snakeoil"), written
# unencrypted into DIR: a published key, for tests only.
sb_keys() {
	if [ -n "${INGOT_SB_KEY:-}" ] || [ -n "${INGOT_SB_CERT:-}" ]; then
		[ -f "${INGOT_SB_KEY:-}" ] && [ -f "${INGOT_SB_CERT:-}" ] ||
			die "INGOT_SB_KEY and INGOT_SB_CERT must both name files (the db key and its certificate)"
		SB_KEY=$(readlink -f "$INGOT_SB_KEY") SB_CERT=$(readlink -f "$INGOT_SB_CERT")
		return
	fi
	local snake=/usr/share/ovmf/PkKek-1-snakeoil
	[ -f "$snake.key" ] && [ -f "$snake.pem" ] || die "$snake.{key,pem} missing (ovmf; or set INGOT_SB_KEY, INGOT_SB_CERT)"
	mkdir -p "$1"
	[ -f "$1/db.key" ] || openssl pkey -in "$snake.key" -passin pass:snakeoil -out "$1/db.key"
	cmp -s "$snake.pem" "$1/db.pem" || cp "$snake.pem" "$1/db.pem"
	SB_KEY=$1/db.key SB_CERT=$1/db.pem
}

# sb_sign_modules CHROOT KV IN_TAR OUT_TAR EPOCH KEY CERT: every .ko of
# IN_TAR (stripped: strip drops a signature, so strip first, then sign)
# signed with sign-file of the chroot's pinned linux-kbuild (its own
# libcrypto), SHA-256, into OUT_TAR.  The signature has no signing time
# (sign-file adds no signed attributes) and PKCS#1 v1.5 is deterministic:
# the same key gives the same bytes.
sb_sign_modules() {
	local br=$1 kv=$2 in=$3 out=$4 epoch=$5 key=$6 cert=$7 w sf ko
	sf=/usr/lib/linux-kbuild-${kv%-amd64}/scripts/sign-file
	[ -x "$br$sf" ] || die "$br$sf missing (linux-kbuild-${kv%-amd64} in the build chroot)"
	w=$br/build/sign-$$
	rm -rf "$w" && mkdir -p "$w/t"
	(umask 077 && cp "$key" "$w/db.key") && cp "$cert" "$w/db.pem"
	tar -xf "$in" -C "$w/t"
	for ko in $(cd "$w/t" && find . -name '*.ko' | sort); do
		chroot "$br" "$sf" sha256 "/build/sign-$$/db.key" "/build/sign-$$/db.pem" "/build/sign-$$/t/$ko" ||
			{ rm -rf "$w"; die "sign-file $ko failed"; }
	done
	rm -f "$w/db.key"
	tar --sort=name --mtime=@"$epoch" --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
		--format=gnu -C "$w/t" -cf "$out.tmp" usr
	mv "$out.tmp" "$out"
	rm -rf "$w"
}
