#!/bin/sh
# Puts calwatch's files in place, or takes them away again. `make install`, `make uninstall` and `make deb` all
# run it, so a build from source and the Debian package hold the same files.
#
#   scripts/install-files.sh install|uninstall
#
# Where things go comes from the environment (the Makefile sets all of it):
#   DESTDIR   staging root, prepended to every path below (empty for a real install)
#   BINDIR    calwatch itself                       DATADIR   completions for bash and fish, and calwatch/data
#   UNITDIR   the systemd user unit                 ZSHDIR    the zsh completion
#   MANDIR    the manual pages (man1)               DOCDIR    README, docs, example configuration, sample hooks
#   BINARY    the calwatch front to install (install only; it also writes the completions); the program it runs,
#             calwatch-commands, is taken from beside it and goes to libexec/calwatch beside BINDIR, where the
#             front looks for it
#   MANPAGES  the folder of argument-parser's generated pages (install only)
set -eu

action=${1:?usage: scripts/install-files.sh install|uninstall}
: "${BINDIR:?}" "${DATADIR:?}" "${UNITDIR:?}" "${ZSHDIR:?}" "${MANDIR:?}" "${DOCDIR:?}"
root=${DESTDIR:-}
bash_completion=$DATADIR/bash-completion/completions/calwatch
fish_completion=$DATADIR/fish/vendor_completions.d/calwatch.fish
zsh_completion=$ZSHDIR/_calwatch
program=$(dirname "$BINDIR")/libexec/calwatch/calwatch-commands

# argument-parser names a subcommand's page calwatch.scan.1; man pages of subcommands are calwatch-scan(1) by
# convention (git, systemctl), and whatis and apropos find a page by the name in its NAME section, so that says
# calwatch-scan while the synopsis still shows the command as it is typed. Blank lines are not mdoc (groff warns
# about each): they become paragraph breaks. The page of the generated `help` subcommand repeats calwatch(1).
install_manual_pages() {
    mkdir -p "$root$MANDIR"
    for page in "$MANPAGES"/calwatch*.1; do
        [ -e "$page" ] || { echo "install-files.sh: no manual pages in $MANPAGES (make manual)" >&2; exit 1; }
        name=$(basename "$page" .1 | tr . -)
        words=$(echo "$name" | tr - ' ')
        [ "$name" = calwatch-help ] && continue
        sed -e '/^\.Xr calwatch\.help 1/d' \
            -e 's/^\(\.Xr calwatch\)\.\([a-z-]*\) 1/\1-\2 1/' \
            -e 's/^\(\.Dt CALWATCH\)\.\([A-Z-]*\) 1/\1-\2 1/' \
            -e "s/^\\.Nm \"$words\"\$/.Nm $name/" \
            -e "s/^\\.Nm\$/.Nm \"$words\"/" \
            -e 's/^$/.Pp/' "$page" | gzip -9n >"$root$MANDIR/$name.1.gz"
        chmod 0644 "$root$MANDIR/$name.1.gz"
    done
}

case $action in
install)
    : "${BINARY:?}" "${MANPAGES:?}"
    install -D -m 0755 "$BINARY" "$root$BINDIR/calwatch"
    install -D -m 0755 "$(dirname "$BINARY")/calwatch-commands" "$root$program"
    # The airport and airline tables with their manifest: calwatch finds them at ../share/calwatch/data from its
    # binary, and checks each against the SHA-256 the manifest records.
    for file in Sources/CalWatchCore/Resources/data/*; do
        install -D -m 0644 "$file" "$root$DATADIR/calwatch/data/$(basename "$file")"
    done

    # The unit in samples/ runs ~/.local/bin/calwatch; the installed one runs the installed binary.
    mkdir -p "$root$UNITDIR"
    sed "s|^ExecStart=%h/.local/bin/calwatch |ExecStart=$BINDIR/calwatch |" samples/calwatch.service \
        >"$root$UNITDIR/calwatch.service"
    chmod 0644 "$root$UNITDIR/calwatch.service"
    grep -q "^ExecStart=$BINDIR/calwatch " "$root$UNITDIR/calwatch.service" ||
        { echo "install-files.sh: samples/calwatch.service has no ExecStart=%h/.local/bin/calwatch line" >&2; exit 1; }

    for shell in bash fish zsh; do
        case $shell in
        bash) target=$bash_completion ;;
        fish) target=$fish_completion ;;
        zsh) target=$zsh_completion ;;
        esac
        mkdir -p "$(dirname "$root$target")"
        # A completion file is sourced, not run: no #! line (bash's is the only one that has it).
        "$BINARY" --generate-completion-script $shell | sed '1{/^#!/d}' >"$root$target"
        chmod 0644 "$root$target"
    done

    install_manual_pages

    # The documented configuration with the samples it names, laid out as in the repository, so
    # `calwatch check --config $DOCDIR/examples/config.yml` reads as it does in a checkout.
    install -D -m 0644 README.md "$root$DOCDIR/README.md"
    find docs -name '*.md' | while read -r page; do
        install -D -m 0644 "$page" "$root$DOCDIR/$page"
    done
    install -D -m 0644 config.yml "$root$DOCDIR/examples/config.yml"
    for folder in calendars radicale caldav; do
        (cd samples && find "$folder" -type f) | while read -r file; do
            install -D -m 0644 "samples/$file" "$root$DOCDIR/examples/samples/$file"
        done
    done
    for hook in samples/hooks/*.sh samples/statusbar/*.sh; do
        install -D -m 0755 "$hook" "$root$DOCDIR/examples/$hook"
    done
    for bar in samples/statusbar/*.jsonc samples/statusbar/*.ini samples/statusbar/*.conf; do
        install -D -m 0644 "$bar" "$root$DOCDIR/examples/$bar"
    done
    ;;
uninstall)
    rm -f "$root$BINDIR/calwatch" "$root$program" "$root$UNITDIR/calwatch.service" \
        "$root$bash_completion" "$root$fish_completion" "$root$zsh_completion" \
        "$root$MANDIR"/calwatch.1.gz "$root$MANDIR"/calwatch-*.1.gz
    rm -rf "$root$DATADIR/calwatch"
    rmdir "$root$(dirname "$program")" 2>/dev/null || true
    case $DOCDIR in
    */calwatch) rm -rf "$root$DOCDIR" ;;
    *) echo "install-files.sh: DOCDIR=$DOCDIR is not calwatch's own folder; left in place" >&2 ;;
    esac
    ;;
*)
    echo "usage: scripts/install-files.sh install|uninstall" >&2
    exit 64
    ;;
esac
