"""Helpers shared by the tests (``tests`` is on the pytest path: ``from support.x import y``).

- :mod:`support.models`: built-in and Menagerie models, random configurations;
- :mod:`support.waiting`: polling until a condition holds;
- :mod:`support.servers`: the app in a thread (``LiveServer``) or ``posekit up`` in a
  subprocess (``ServerProcess``), on a free loopback port;
- :mod:`support.streams`: websocket stream clients and pose helpers;
- :mod:`support.viewers`: driving a viser viewer without a browser;
- :mod:`support.browser`: the machine's Chromium for the browser tests;
- :mod:`support.postgres`: the PostgreSQL server, a fresh schema per test (the
  ``postgres_url`` fixture);
- :mod:`support.nginx`: a real nginx from ``deploy/nginx/posekit.conf.template``, run as
  the current user from a folder of its own;
- :mod:`support.cluster`: three ``posekit up`` replicas (process groups) on one
  PostgreSQL schema behind that nginx (also used by ``bench/cluster_failover.py``);
- :mod:`support.reconnecting_stream`: a session stream client that reconnects with
  backoff, recording when states arrive.

Fixtures live in the ``conftest.py`` files only.
"""
