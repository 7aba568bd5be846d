// Package deploy checks the deployment files (docker-compose.yml, Dockerfile); no Docker engine is needed.
package deploy
