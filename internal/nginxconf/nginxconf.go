// Package nginxconf writes the nginx.conf of an nginx that Hermes starts
// itself: the lab's gateway (hermes lab) and the tests' nginx
// (internal/testenv). Both run nginx in the foreground from a prefix dir
// of their own, so they share the prologue this package holds.
package nginxconf

import (
	"fmt"
	"os"
)

// Conf is an nginx.conf run from dir: in the foreground (daemon off), one
// master and one worker (so weighted round robin splits exactly) of
// connections connections each, its pid file and error log in dir and
// its temp paths under dir/tmp, which the caller makes. http is the rest
// of the http block (includes and servers, indented by four spaces).
// Run as root, the workers run as root too, so that they reach the temp
// paths under a root-owned temp dir.
func Conf(dir string, connections int, http string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	return fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
%[1]s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log notice;
events { worker_connections %[3]d; }
http {
    access_log off;
    client_body_temp_path %[2]s/tmp/client_body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
%[4]s}
`, user, dir, connections, http)
}
