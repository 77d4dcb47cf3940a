for my $f (@ARGV) {
	next unless -e $f;
	my ($name) = $f =~ m{([^/]*)\z};
	sec("fragment $name", hexof($f));
}
