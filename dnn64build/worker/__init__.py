"""The persistent stage worker: ninja's actions hand their requests to one long-lived
process started by ``dnn64build build``, which forks a child per request, so the
interpreter and the compiler's imports load once per build, not once per action."""
