//! Starting Redis containers through testcontainers, several at the same time.
//!
//! testcontainers pulls an image only when creating the container answers "no such image", so a
//! locally built image works without a registry; an image that is neither here nor pullable is a
//! [`FailureKind::ImageUnavailable`], for the judge's remedy. Engines that only speak an older API
//! (Docker 20.10 speaks 1.41) work: the client in testcontainers 0.28 sends unversioned request
//! paths, which the engine serves at its own API version.

use std::collections::HashMap;
use std::time::Duration;

use course_docker_protocol::{ContainerSpec, Failure, FailureKind, Started};
use testcontainers::bollard::models::PortBinding;
use testcontainers::core::{IntoContainerPort, WaitFor};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, ContainerRequest, GenericImage, ImageExt};

use crate::calls::{CALL_TIMEOUT, bounded};

/// Starts every container of `specs` at the same time; one result per spec, in order.
pub(crate) async fn start_all(
    specs: Vec<ContainerSpec>,
) -> Vec<Result<(ContainerAsync<GenericImage>, Started), Failure>> {
    let starts: Vec<_> = specs
        .into_iter()
        .map(|spec| tokio::spawn(start(spec)))
        .collect();
    let mut results = Vec::with_capacity(starts.len());
    for start in starts {
        results.push(start.await.unwrap_or_else(|e| {
            Err(Failure {
                kind: FailureKind::Refused,
                message: format!("the start of a container failed: {e}"),
            })
        }));
    }
    results
}

async fn start(spec: ContainerSpec) -> Result<(ContainerAsync<GenericImage>, Started), Failure> {
    // testcontainers bounds the wait for the ready line; this bounds the rest (a pull, say).
    let limit = Duration::from_millis(spec.startup_timeout_ms) + 3 * CALL_TIMEOUT;
    let container = bounded(limit, request(&spec).start()).await?;
    let host = match bounded(CALL_TIMEOUT, container.get_host()).await {
        Ok(host) => host.to_string(),
        Err(e) => {
            let _ = bounded(CALL_TIMEOUT, container.rm()).await;
            return Err(e);
        }
    };
    let id = container.id().to_owned();
    Ok((container, Started { id, host }))
}

/// The request testcontainers starts for `spec`.
fn request(spec: &ContainerSpec) -> ContainerRequest<GenericImage> {
    let (name, tag) = split_image(&spec.image);
    let mut request = GenericImage::new(name, tag)
        .with_exposed_port(6379.tcp())
        .with_wait_for(WaitFor::message_on_stdout(spec.ready_line.clone()))
        .with_cmd(spec.command.clone())
        .with_startup_timeout(Duration::from_millis(spec.startup_timeout_ms));
    for (label, value) in &spec.labels {
        request = request.with_label(label, value);
    }
    if let Some(network) = &spec.network {
        request = request.with_network(network);
    }
    if let Some(name) = &spec.name {
        request = request.with_container_name(name);
    }
    if spec.loopback_only {
        // testcontainers would publish on every interface.
        request = request.with_host_config_modifier(|host_config| {
            host_config.publish_all_ports = Some(false);
            host_config.port_bindings = Some(HashMap::from([(
                "6379/tcp".to_owned(),
                Some(vec![PortBinding {
                    host_ip: Some("127.0.0.1".to_owned()),
                    host_port: Some(String::new()),
                }]),
            )]));
        });
    }
    request
}

/// Splits "name[:tag]" at the tag's colon, not at a registry's port ("host:5000/redis").
fn split_image(image: &str) -> (String, String) {
    let last_segment = image.rfind('/').map_or(0, |slash| slash + 1);
    match image[last_segment..].rfind(':') {
        Some(colon) => {
            let colon = last_segment + colon;
            (image[..colon].to_owned(), image[colon + 1..].to_owned())
        }
        None => (image.to_owned(), "latest".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_split_at_the_tag() {
        let split = |image| split_image(image);
        assert_eq!(split("redis"), ("redis".into(), "latest".into()));
        assert_eq!(split("redis:7.4"), ("redis".into(), "7.4".into()));
        assert_eq!(
            split("localhost:5000/redis"),
            ("localhost:5000/redis".into(), "latest".into())
        );
        assert_eq!(
            split("localhost:5000/redis:7"),
            ("localhost:5000/redis".into(), "7".into())
        );
    }
}
