// Package firewall keeps UFW rules and policies as data. Rules are read from
// UFW's own rule files, never from `ufw status`, so reading works the same
// whether UFW is active or not, and a rule is named by what it admits, never
// by UFW's rule number, which shifts whenever another rule is added.
package firewall
