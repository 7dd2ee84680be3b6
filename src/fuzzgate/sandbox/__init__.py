"""Containing a server: where every server fuzzgate starts runs, what it may touch, and every process
it starts, until the last one is reaped.

- In: the `TargetConfig` (command, cwd, `[target] scope`, `sandbox = auto|required|off`).
- Out: a `Containment` (`containment.py`) that lays a fresh `Layer` over the scope for each server
  start and says how the server is held (the one-line reason when the jail is off); `LaunchSpec`
  and `OwnedProcess`, the process fuzzgate owns whatever it speaks on.
- Never: speak MCP, judge what a server wrote (that is `check`), or let a server work on the user's
  files.

The modules:

- `containment.py`: the containment of every server fuzzgate starts (run, replay, prune, listing):
  its scope (inferred or `[target] scope`) and the layer each start gets.
- `workspace.py`: a fresh throwaway layer per server start; an overlay in the jail, a copy without
  it. The watched directory outside the scope holds canaries; a snapshot before and after each call
  gives the changes there. `watch.py`: an inotify watch on that directory, so a snapshot walks it
  again only when something changed there since the last walk.
- `scope.py`: the scope, configured or inferred from the command line; `canaries.py`: the canaries
  and their markers (and the name tokens a listing shows); `boundary.py`: the canaries at the
  scope's boundary (prefix siblings of every scope dir, links planted in it, the user's own links
  out of it redirected to watched stand-ins); `stale_roots.py`: each root names its owner process,
  and the roots of owners killed with SIGKILL are swept by the next workspace; `removal.py`: removing a tree whatever a
  server did to it, never through a symlink.
- `jail.py` with `_jail_init.py`: the jail where namespaces work. unshare + overlayfs, a
  loopback-only network, the rest read-only, a minimal /dev, nodev everywhere else, an empty /run
  with the host's Unix sockets covered, private /tmp and HOME overlays, its own PID namespace.
  `_jail_init.py` is run by path (`python -I -S`) as the jail's first process (its processes: the
  reaper, the server, the exit status passed on), puts this package's directory on its path and
  imports only `_jail_spec.py` (the spec it is given as arguments, its errors and messages),
  `_jail_view.py` (the mounts and system calls that build the view) and `_scope_copy.py` (a scope
  dir copied, in the jail or by `workspace` without it), which import only the standard library;
  none of them can be measured by coverage.py in the jail (it execs the server).
- `listener.py` with `_listener.py`: the SSRF listener. `_listener.py` is the tiny HTTP server the
  jail's init starts on the jail's own loopback (stdlib only, imported by `_jail_init.py` only when
  asked for), reporting each request's path on a pipe; `listener.py` is fuzzgate's side: its port,
  the canary URLs, reading the pipe call by call (`ListenerLog`), and `unreachable` for servers
  without it. `Containment.unheld` says whether the sandbox holds for a start (what
  `fuzz_guarded_in_sandbox` needs).
- `relay.py` with `_relay.py`: how fuzzgate reaches an HTTP server it started in the jail, on the
  jail's own loopback. `_relay.py` is the relay the jail's init starts (stdlib only, imported only
  when asked for): two Unix sockets bound in a host directory before the view is built, one passed
  on to the server's port, one answering whether that port accepts connections; `relay.py` is the
  directory for one server start (`RelayDir`), which fuzzgate's HTTP client connects to.
- `owned_process.py`: what any server process fuzzgate starts needs: the launch spec, its own
  session, `CUSTODY` (fuzzgate's own children), the line log of its stderr (a line too long to keep
  is redacted here, where it is whole: the one import of a later stage, `check.secrets`), stop and
  bury, and the memory watch.
- `early.py`: a server process started before the event loop runs (`subprocess.Popen`, exactly as
  `OwnedProcess.start` would start it, in `CUSTODY` at once) and the `anyio.abc.Process` through
  which `OwnedProcess` takes it over (non-blocking pipes, its exit on a pidfd).
- `process_tree.py`: makes fuzzgate a child subreaper and reads the server's whole process tree
  from /proc (descendants, session members, orphans re-parented to fuzzgate that are not in
  `CUSTODY`), freezes, kills and reaps it; the process group only where there is no /proc.
- `resident.py`: the resident memory of a server's process tree, read from /proc, which
  `OwnedProcess.watch_memory` polls to stop a server past `[fuzzgate] memory_limit`.
"""
