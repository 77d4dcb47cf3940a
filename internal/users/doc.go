// Package users keeps POSIX users and groups identical across cluster nodes.
// It knows the host's account tools (getent, useradd, usermod, userdel,
// groupadd, groupmod, groupdel) and the UID ledger, and has no Terraform
// types: the provider layer turns its errors and drift messages into
// diagnostics.
package users
