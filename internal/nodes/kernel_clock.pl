my %nr = (x86_64 => 159, aarch64 => 171, riscv64 => 171, ppc64le => 124, s390x => 124, i686 => 124, armv7l => 124);
my $arch;
my $machine = (open($arch, "<", "/proc/sys/kernel/arch") ? readline($arch) : `uname -m`) // "";
chomp $machine;
my $nr = $nr{$machine} // exit 3;
my $long = length pack("l!", 0);
my $timex = "\0" x 512;
syscall($nr, $timex) >= 0 or exit 4;
print "maxerror=", unpack("l!", substr($timex, 3 * $long, $long)), "\n";
