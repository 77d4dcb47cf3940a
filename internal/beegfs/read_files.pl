while (my ($kind, $key, $path) = splice @ARGV, 0, 3) {
	next if $kind eq "id" && !-f $path;
	sec($key, -e $path ? hexof($path) : 3);
}
