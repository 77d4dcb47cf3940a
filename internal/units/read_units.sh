# shellcheck shell=sh disable=SC2154 # the caller sets unit_dirs, and the units as "$@"
present='' linked='' absent=''
for u; do
	f=L
	case $u in *@*) ;; *.service)
		f=
		for d in $unit_dirs; do
			if [ -L "$d/$u" ]; then f=L; break; elif [ -e "$d/$u" ]; then f=F; break; fi
		done ;;
	esac
	case $f in
	F) present="$present $u" ;;
	L) present="$present $u" linked="$linked $u" ;;
	*) absent="$absent$u
" ;;
	esac
done
secv absent 0 "$absent"
# shellcheck disable=SC2086 # split on purpose: the present units, whose names hold no blank
set -- $present
linked() { for u in $linked; do printf '%s ' "$u"; systemctl is-active "$u"; done; }
if [ $# -gt 0 ]; then
sec loaded systemctl list-units --all --plain --no-legend --full "$@"
if [ -n "$linked" ]; then sec linked linked; else secv linked 0; fi
sec enabled systemctl is-enabled "$@" 2>/dev/null
fi
