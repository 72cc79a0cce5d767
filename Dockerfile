# dialog-gym as an OpenEnv environment server (HTTP + WebSocket on port 8000).
#
#   docker build -t dialog-gym-openenv .
#   docker run -p 8000:8000 dialog-gym-openenv                                  # the newest RLVER-Empathy id
#   docker run -p 8000:8000 -e DIALOG_GYM_ENV_ID=RLVER-Empathy-SAGE-v1 \
#       -e DIALOG_GYM_ENV_OPTIONS='{"language": "en"}' -e DIALOG_GYM_MAX_SESSIONS=256 dialog-gym-openenv
#
# Clients: openenv's EnvClient / GenericEnvClient, or dialog_gym.integrations.openenv.DialogEnvClient,
# at http://HOST:8000. openenv.yaml (beside this file) is the environment's manifest.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
COPY envs ./envs
COPY personas ./personas
RUN pip install --no-cache-dir ".[openenv]"

# The server's set-up (see dialog_gym.integrations.openenv.server.app_from_environment).
ENV DIALOG_GYM_ENV_ID="" \
    DIALOG_GYM_MAX_SESSIONS=64 \
    DIALOG_GYM_ENV_OPTIONS="{}"

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2)"
CMD ["uvicorn", "dialog_gym.integrations.openenv.server:app", "--host", "0.0.0.0", "--port", "8000"]
