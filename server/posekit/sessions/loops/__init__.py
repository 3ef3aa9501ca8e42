"""Solve loops: what steps live sessions at their rates, off the event loop.

- :class:`~posekit.sessions.loops.scheduler.Scheduler` steps sessions on a thread of
  this process;
- :class:`~posekit.sessions.loops.solver_processes.SolverProcesses` mirrors them into
  solver processes (:mod:`~posekit.sessions.loops.solver_worker`), which step them and
  send the states back.

Both implement :class:`~posekit.sessions.loops.solve_loop.SolveLoop` and keep their own
bookkeeping; they use only a session's public interface
(:class:`~posekit.sessions.loops.solve_loop.LoopSession`).
"""
