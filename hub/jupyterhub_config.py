"""The hub of `make hub` (hub/hub.py starts it: jupyterhub -f hub/jupyterhub_config.py, as root).

Everything that varies (ports, folders, accounts) comes from the state file hub/hub.py writes
($DLCOURSE_HUB_STATE). PAM logs the class's accounts in; each user's server is jupyterhub-singleuser from
the class's environment, run as that account in its home folder (LocalProcessSpawner):

- the instructor (hub group ``instructors``): the whole of nbgrader (Assignments, Course List, Formgrader,
  Create Assignment); the course directory is ~/dlcourse (~/.jupyter/nbgrader_config.py sets
  CourseDirectory.root), first on PYTHONPATH so that the course's grader and settings are the copy's;
- the students: JupyterLab with the course's settings, nbgrader's instructor parts disabled and locked
  (JUPYTER_CONFIG_PATH=student-config, the jupyter-config/student/ of `make lab`, locked).
"""
import json
import os

c = get_config()  # noqa: F821  (provided by jupyterhub)

state = json.loads(open(os.environ["DLCOURSE_HUB_STATE"]).read())
venv, hub_state = state["venv"], state["hub_state"]

c.JupyterHub.ip = state["ip"]
c.JupyterHub.port = state["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = state["hub_api_port"]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{state['proxy_api_port']}"
c.ConfigurableHTTPProxy.command = [state["proxy_command"]]
c.ConfigurableHTTPProxy.pid_file = os.path.join(hub_state, "jupyterhub-proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(hub_state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(hub_state, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(hub_state, "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops the users' servers and the proxy
c.JupyterHub.cleanup_proxy = True

# PAM (the default authenticator): the accounts make hub made, and nobody else
c.Authenticator.allowed_users = {state["instructor"], *state["students"]}
c.PAMAuthenticator.open_sessions = False  # no systemd-logind session for a web login
c.JupyterHub.load_groups = {state["group"]: {"users": [state["instructor"]]}}

c.Spawner.cmd = [os.path.join(venv, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.http_timeout = 90
c.Spawner.start_timeout = 120
# nbgrader shells out to jupyter and alembic: the class's environment first on PATH
c.Spawner.environment = {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def per_role(spawner):
    """Instructors: their course copy first on PYTHONPATH (its autograder and settings), its make targets on
    the class's environment; students: the lab without nbgrader's instructor parts."""
    groups = {group.name for group in spawner.user.groups}
    if state["group"] in groups:
        extra = {"PYTHONPATH": state["course_copy"], "DLCOURSE_EXISTING_ENV": "1"}
    else:
        extra = {"JUPYTER_CONFIG_PATH": state["student_config"]}
    spawner.environment = {**spawner.environment, **extra}  # a new dict: the configured one is shared


c.Spawner.pre_spawn_hook = per_role
