//! Every Redis server the grader starts requires a password of its own, so that no other process
//! on the machine (a classmate's lock under test, say) can reach it directly: the one shared
//! server (a process or a container, as `GRADER_REDIS` chooses), Redlock's nodes (processes and,
//! where Docker has the image, containers), and the primary and replica of the failover stories.
//!
//! For each shape: a connection without the password is refused (`NOAUTH`) for `PING`,
//! `FLUSHALL` and `CONFIG GET`, another server's password is refused too, and the grader's own
//! connection works; a killed and restarted node still requires its password; replication works
//! with the passwords (a write on the primary reaches the replica, `WAIT 1` answers 1, after a
//! failover too). And the password shows nowhere a person reads: not in the announcement on
//! stderr, not in a server's or a node's description, not in an error.

use std::process::Command;

use grader::nodes::{Node, NodeSet};
use grader::replication;
use grader::server::{self, NodeSource, ServerKind};

/// The fewest hex digits a password may have: 128 bits.
const MIN_PASSWORD_HEX: usize = 32;

/// The password in a `redis://[USER]:PASSWORD@HOST:PORT` URL, or in the query of a Unix socket's
/// (`redis+unix:///PATH?pass=PASSWORD`), if any.
fn password_in(url: &str) -> Option<String> {
    if let Some((_, password)) = url.split_once("?pass=") {
        return Some(password.to_owned()).filter(|p| !p.is_empty());
    }
    let rest = url.split_once("://")?.1;
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let (user_info, _) = authority.rsplit_once('@')?;
    let (_, password) = user_info.split_once(':')?;
    Some(password.to_owned()).filter(|p| !p.is_empty())
}

/// The password of a server the grader started, checked to be long enough.
fn own_password(url: &str, what: &str) -> String {
    let password =
        password_in(url).unwrap_or_else(|| panic!("{what} was started without a password"));
    assert!(
        password.len() >= MIN_PASSWORD_HEX && password.chars().all(|c| c.is_ascii_hexdigit()),
        "{what}'s password is not 128 random bits in hex"
    );
    password
}

/// Where a URL reaches its server, without its user and password: `HOST:PORT`, or the path of
/// a Unix socket (a server the grader starts itself is reached by its socket).
fn host_port(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("redis+unix://") {
        return rest
            .split_once('?')
            .map_or(rest, |(path, _)| path)
            .to_owned();
    }
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, hp)| hp)
        .to_owned()
}

/// The URL of `host_port` (or of a Unix socket's path) with `password`, if any.
fn url_of(host_port: &str, password: Option<&str>) -> String {
    match (host_port.starts_with('/'), password) {
        (true, None) => format!("redis+unix://{host_port}"),
        (true, Some(password)) => format!("redis+unix://{host_port}?pass={password}"),
        (false, None) => format!("redis://{host_port}"),
        (false, Some(password)) => format!("redis://:{password}@{host_port}"),
    }
}

/// A connection to `host_port` (or a Unix socket's path) as any other process could open it: no
/// password, or `password`.
fn stranger(host_port: &str, password: Option<&str>) -> redis::Connection {
    let client =
        redis::Client::open(url_of(host_port, password)).unwrap_or_else(|e| panic!("a URL: {e}"));
    client
        .get_connection_with_timeout(std::time::Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("{host_port} accepts a connection: {e}"))
}

/// A connection without the password is refused `PING`, `FLUSHALL` and `CONFIG GET`.
fn refuses_strangers(host_port: &str, what: &str) {
    let mut con = stranger(host_port, None);
    let commands: [&[&str]; 3] = [&["PING"], &["FLUSHALL"], &["CONFIG", "GET", "maxmemory"]];
    for command in commands {
        let mut cmd = redis::cmd(command[0]);
        cmd.arg(&command[1..]);
        match cmd.query::<redis::Value>(&mut con) {
            Err(e) => assert_eq!(
                e.code(),
                Some("NOAUTH"),
                "{what} refuses {command:?} without the password, but not as NOAUTH: {e}"
            ),
            Ok(reply) => {
                panic!("{what} ran {command:?} for a connection without its password: {reply:?}")
            }
        }
    }
}

/// Signing in with `password`, which is not the server's, is refused.
fn refuses_password(host_port: &str, password: &str, what: &str) {
    let client = redis::Client::open(url_of(host_port, Some(password)))
        .unwrap_or_else(|e| panic!("a URL: {e}"));
    let signed_in = client
        .get_connection_with_timeout(std::time::Duration::from_secs(5))
        .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con));
    assert!(
        signed_in.is_err(),
        "{what} accepts another server's password"
    );
}

/// The grader's own connection works, and may do what the grader does.
fn answers(con: &mut redis::Connection, what: &str) {
    let pong: String = redis::cmd("PING")
        .query(con)
        .unwrap_or_else(|e| panic!("{what} refuses the grader's own connection: {e}"));
    assert_eq!(pong, "PONG", "{what}");
}

/// Fails `test`, which cannot run here, saying why: a test that did not test is never a pass.
fn cannot_run(test: &str, why: &str) -> ! {
    panic!("cannot run here: {test}: {why}")
}

/// Why a test that needs a server the grader started cannot run on REDIS_URL's.
const NOT_OURS: &str = "the server is REDIS_URL's, not one the grader started (unset REDIS_URL, \
                        or set GRADER_REDIS=process)";

/// The image for container nodes; the test fails unless the Docker engine answers and has it.
fn container_source(test: &str) -> NodeSource {
    let image = server::image_name();
    if let Err(e) = server::docker_available() {
        cannot_run(test, &format!("no Docker engine ({e})"));
    }
    match server::image_present(&image) {
        Ok(true) => NodeSource::Container { image },
        Ok(false) => cannot_run(
            test,
            &format!("the image {image} is not here (REDIS_IMAGE=redis-course:local runs it)"),
        ),
        Err(e) => cannot_run(test, &format!("the engine cannot say ({e})")),
    }
}

#[test]
fn the_shared_server_requires_its_password() {
    let server = server::shared().unwrap_or_else(|e| panic!("{e}"));
    if *server.kind() == ServerKind::Url {
        cannot_run("the_shared_server_requires_its_password", NOT_OURS);
    }
    let what = format!("the shared server ({})", server.kind().name());
    let address = host_port(server.url());
    refuses_strangers(&address, &what);
    let password = own_password(server.url(), &what);
    refuses_password(&address, &"0".repeat(MIN_PASSWORD_HEX), &what);
    let mut con = server.connect().unwrap_or_else(|e| panic!("{e}"));
    answers(&mut con, &what);
    // The grader's admin steps run as the default user, whose password requirepass sets.
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut con)
        .unwrap_or_else(|e| panic!("INFO as the default user: {e}"));
    assert!(info.contains("redis_version:"), "{info}");
    for shown in [server.to_string(), format!("{server:?}")] {
        assert!(!shown.contains(&password), "the password shows: {shown}");
    }
}

/// A learner's connection signs in as a user of its check's own ([`grader::acl`]), created by
/// the grader's admin connection, which is signed in with the server's password.
#[test]
fn acl_users_work_on_the_passworded_shared_server() {
    let server = server::shared().unwrap_or_else(|e| panic!("{e}"));
    if *server.kind() == ServerKind::Url {
        cannot_run("acl_users_work_on_the_passworded_shared_server", NOT_OURS);
    }
    own_password(server.url(), "the shared server");
    let namespace = format!(
        "{}passwords-test:{}:",
        grader::prefix::course(),
        std::process::id()
    );
    let key = format!("{namespace}k");
    let mut con = server.connect().unwrap_or_else(|e| panic!("{e}"));
    let run = grader::prefix::run().unwrap_or_else(|e| panic!("the run's prefix: {e}"));
    let confined = grader::acl::confine(&mut con, run, &namespace)
        .unwrap_or_else(|e| panic!("a user for the check: {e}"));
    assert!(confined, "the grader may create users on its own server");
    redis::cmd("SET")
        .arg(&key)
        .arg("v")
        .exec(&mut con)
        .unwrap_or_else(|e| panic!("the check's user writes its key: {e}"));
    let refused = redis::cmd("FLUSHALL").exec(&mut con);
    assert!(
        refused.as_ref().is_err_and(|e| e.code() == Some("NOPERM")),
        "the check's user may not flush: {refused:?}"
    );
    grader::acl::world_closed(&namespace);
    let mut admin = server.connect().unwrap_or_else(|e| panic!("{e}"));
    redis::cmd("DEL")
        .arg(&key)
        .exec(&mut admin)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Node checks shared by both sources: refused without the password and with another node's,
/// the grader's connection works, and a kill and a restart keep the password.
fn nodes_require_their_passwords(source: &NodeSource) {
    let mut set = NodeSet::start_from(2, source).unwrap_or_else(|e| panic!("two nodes: {e}"));
    let what = |i: usize| format!("{} node {i}", source.name());
    for i in 0..2 {
        let node = &set.nodes()[i];
        refuses_strangers(&host_port(&node.url()), &what(i));
        // A process node is reached by its socket; its port, for its peers, refuses too.
        let (host, port) = node.peer_address();
        refuses_strangers(
            &format!("{host}:{port}"),
            &format!("{}'s peer port", what(i)),
        );
    }
    let passwords: Vec<String> = (0..2)
        .map(|i| own_password(&set.nodes()[i].url(), &what(i)))
        .collect();
    assert_ne!(
        passwords[0], passwords[1],
        "each node has a password of its own"
    );
    for i in 0..2 {
        let node = &set.nodes()[i];
        let address = host_port(&node.url());
        refuses_password(&address, &passwords[1 - i], &what(i));
        answers(
            &mut node.connect().unwrap_or_else(|e| panic!("{e}")),
            &what(i),
        );
        assert!(
            !format!("{node:?}").contains(&passwords[i]),
            "the password shows in {node:?}"
        );
    }

    let node: &mut Node = set.node(0);
    let address = host_port(&node.url());
    node.kill();
    let down = node.connect().map(drop).map_err(|e| e.to_string());
    let down = down.expect_err("a killed node refuses connections");
    assert!(!down.contains(&passwords[0]), "the password shows: {down}");
    node.restart()
        .unwrap_or_else(|e| panic!("the node restarts: {e}"));
    assert_eq!(host_port(&node.url()), address, "at the same address");
    assert_eq!(
        password_in(&node.url()).as_deref(),
        Some(passwords[0].as_str()),
        "with the same password"
    );
    refuses_strangers(&address, &format!("{} after its restart", what(0)));
    answers(
        &mut node.connect().unwrap_or_else(|e| panic!("{e}")),
        &format!("{} after its restart", what(0)),
    );
}

#[test]
fn process_nodes_require_their_passwords() {
    if let Err(e) = server::local_redis_server() {
        cannot_run(
            "process_nodes_require_their_passwords",
            &format!("no redis-server ({e})"),
        );
    }
    nodes_require_their_passwords(&NodeSource::Process);
}

#[test]
#[ignore = "needs a Docker engine with the Redis image: GRADER_REDIS=container cargo test -p \
            grader --test server_passwords -- --ignored container_ (.ci/run does)"]
fn container_nodes_require_their_passwords() {
    let source = container_source("container_nodes_require_their_passwords");
    nodes_require_their_passwords(&source);
}

/// A write on `pair`'s primary reaches its replica, and `WAIT 1` says so.
fn replicates(pair: &replication::Pair, key: &str, value: &str) {
    let mut primary = pair.connect_primary().unwrap_or_else(|e| panic!("{e}"));
    redis::cmd("SET")
        .arg(key)
        .arg(value)
        .exec(&mut primary)
        .unwrap_or_else(|e| panic!("the primary takes a write: {e}"));
    let acked: u64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2_000)
        .query(&mut primary)
        .unwrap_or_else(|e| panic!("WAIT: {e}"));
    assert_eq!(acked, 1, "the replica acknowledged the write");
    let mut replica = pair
        .node(pair.replica())
        .connect()
        .unwrap_or_else(|e| panic!("{e}"));
    let copied: Option<String> = redis::cmd("GET")
        .arg(key)
        .query(&mut replica)
        .unwrap_or_else(|e| panic!("GET on the replica: {e}"));
    assert_eq!(
        copied.as_deref(),
        Some(value),
        "the write reached the replica"
    );
}

#[test]
fn the_replica_pair_requires_its_passwords_and_still_replicates() {
    let mut pair =
        replication::lease().unwrap_or_else(|e| panic!("a primary and its replica: {e}"));
    let key = "dlcourse:passwords-test:replicated";
    for (i, name) in replication::NAMES.iter().enumerate() {
        refuses_strangers(&host_port(&pair.node(i).url()), name);
    }
    let passwords: Vec<String> = (0..2)
        .map(|i| own_password(&pair.node(i).url(), replication::NAMES[i]))
        .collect();
    assert_ne!(
        passwords[0], passwords[1],
        "each node has a password of its own"
    );
    for (i, name) in replication::NAMES.iter().enumerate() {
        let address = host_port(&pair.node(i).url());
        refuses_password(&address, &passwords[1 - i], name);
    }
    replicates(&pair, key, "first");

    // The replica comes back empty, with its password, and links up again.
    pair.restart_replica_empty()
        .unwrap_or_else(|e| panic!("the replica restarts: {e}"));
    refuses_strangers(&host_port(&pair.node(1).url()), "the restarted replica");
    pair.rejoin()
        .unwrap_or_else(|e| panic!("the replica rejoins: {e}"));
    replicates(&pair, key, "second");

    // After a failover the old primary follows the new one, whose password is another.
    pair.kill_primary();
    pair.promote()
        .unwrap_or_else(|e| panic!("the replica is promoted: {e}"));
    pair.rejoin()
        .unwrap_or_else(|e| panic!("the old primary rejoins as the replica: {e}"));
    assert_eq!(pair.primary(), 1, "node 2 is the primary now");
    refuses_strangers(&host_port(&pair.node(0).url()), "the old primary, back");
    replicates(&pair, key, "third");
    let mut primary = pair.connect_primary().unwrap_or_else(|e| panic!("{e}"));
    let _ = redis::cmd("DEL").arg(key).exec(&mut primary);
}

/// Run by [`the_announcement_hides_the_password`] in a child process: starts the shared server,
/// whose announcement goes to stderr, and prints its password on stdout.
#[test]
#[ignore = "run by another test in a child process"]
fn child_announces_its_server() {
    if std::env::var_os("PASSWORDS_TEST_CHILD").is_none() {
        return;
    }
    let server = server::shared().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "child: password={}",
        password_in(server.url()).unwrap_or_default()
    );
}

#[test]
fn the_announcement_hides_the_password() {
    let output = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "--ignored",
            "--exact",
            "child_announces_its_server",
            "--nocapture",
        ])
        .env("PASSWORDS_TEST_CHILD", "1")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let password = stdout
        .lines()
        .find_map(|line| line.strip_prefix("child: password="))
        .unwrap_or_default();
    let announcement = stderr
        .lines()
        .find(|line| line.starts_with("grader: redis via "))
        .unwrap_or_else(|| panic!("no announcement: {stderr}"));
    if announcement.starts_with("grader: redis via url: ") {
        cannot_run("the_announcement_hides_the_password", NOT_OURS);
    }
    assert!(
        password.len() >= MIN_PASSWORD_HEX,
        "the child's server has no password: {stdout}"
    );
    assert!(
        !stderr.contains(password),
        "the password shows on stderr: {stderr}"
    );
    assert!(
        announcement.contains("***"),
        "the announcement masks the password: {announcement}"
    );
}
