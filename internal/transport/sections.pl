sub sec { my ($k, $rc, $c) = (@_, q{}); die "a section key with a newline\n" if $k =~ /\n/; print q{@@gpucluster }, "$rc ", length($c), " $k\n", $c, "\n" }
sub hexof { open(my $h, "<:raw", $_[0]) or return 1; local $/; my $c = readline $h; defined $c or return 1; (0, unpack("H*", $c)) }
binmode STDOUT;
