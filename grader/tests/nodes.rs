//! The five nodes are real servers, and the faults really happen to them: a paused node answers
//! nothing to anyone, a killed one refuses connections and comes back empty at the same address,
//! a delayed restart keeps it down for its virtual time, one node's clock jumps alone, a late reply
//! costs virtual time, a node reaches another at its peer address, the grader's own connection to
//! a node is kept for the next scenario but never past a kill, and a killed test process
//! leaves no node behind, paused or not.
//!
//! The nodes come from the source `GRADER_REDIS` names (see `grader::server::node_source`):
//! `redis-server` processes, whose state the tests read in `/proc`, or containers on a private
//! Docker network, whose state they ask of the `docker` command, an observer apart from the
//! grader's own Docker client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grader::Wire;
use grader::nodes::cluster::{Cluster, enter};
use grader::nodes::{Health, NODES};
use grader::server;

const TTL_MS: u64 = 10_000;

/// Whether a process with this pid exists (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The state letter of a process (`T` when stopped).
fn state(pid: i32) -> char {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit(')').next()?.trim_start().chars().next())
        .unwrap_or('?')
}

/// What `docker inspect` says of a container, as the Go template `format` prints it.
fn docker_inspect(format: &str, target: &str) -> String {
    let output = Command::new("docker")
        .args(["inspect", "--format", format, target])
        .output()
        .expect("the docker command");
    assert!(
        output.status.success(),
        "docker inspect {target}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// The engine's word for a container's state: "running", "paused", "exited"…
fn container_status(id: &str) -> String {
    docker_inspect("{{.State.Status}}", id)
}

/// Connects to a node within a second, or says why not.
fn connect(address: &(String, u16)) -> std::io::Result<TcpStream> {
    let socket = std::net::ToSocketAddrs::to_socket_addrs(&(address.0.as_str(), address.1))?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    TcpStream::connect_timeout(&socket, Duration::from_secs(1))
}

/// Sends PING on a raw socket and waits `wait` for an answer. A node requires its password, so
/// a running one answers this stranger `-NOAUTH …`: any reply shows it runs.
fn pings(address: &(String, u16), wait: Duration) -> std::io::Result<bool> {
    let mut socket = connect(address)?;
    socket.set_read_timeout(Some(wait))?;
    socket.write_all(b"PING\r\n")?;
    let mut reply = [0u8; 7];
    Ok(socket.read_exact(&mut reply).is_ok() && (&reply == b"+PONG\r\n" || &reply == b"-NOAUTH"))
}

/// The password in a node's URL: `redis://:PASSWORD@HOST:PORT` (a container), or
/// `redis+unix:///PATH?pass=PASSWORD` (a process, reached by its socket).
fn password_of(url: &str) -> String {
    let in_query = url.split_once("?pass=").map(|(_, password)| password);
    let in_authority = url
        .split_once("://:")
        .and_then(|(_, rest)| rest.rsplit_once('@'))
        .map(|(password, _)| password);
    in_query
        .or(in_authority)
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("a node's URL carries its password"))
}

#[test]
fn a_paused_node_answers_nobody_and_keeps_its_data() {
    let mut c = Cluster::open().expect("cluster");
    let (address, pid) = (c.address(1), c.pid(1));
    assert!(c.take(1, "A", TTL_MS).expect("take"));
    c.pause(1).expect("pause");
    assert_eq!(c.health(1), Health::Paused);
    match c.container(1) {
        None => assert_eq!(state(pid), 'T', "the process is stopped"),
        Some(id) => assert_eq!(container_status(&id), "paused", "the container is frozen"),
    }
    assert!(
        !pings(&address, Duration::from_millis(200)).expect("the socket still accepts"),
        "a stopped redis-server must not answer"
    );
    c.resume(1).expect("resume");
    assert_eq!(c.holder(1).expect("look").as_deref(), Some("A"));
    assert!(pings(&address, Duration::from_secs(2)).expect("ping"));
}

#[test]
fn a_killed_node_refuses_connections_and_restarts_empty() {
    let mut c = Cluster::open().expect("cluster");
    let (address, pid) = (c.address(2), c.pid(2));
    assert!(c.take(2, "A", TTL_MS).expect("take"));
    c.kill(2);
    assert_eq!(c.health(2), Health::Down);
    match c.container(2) {
        None => {
            let deadline = Instant::now() + Duration::from_secs(5);
            while alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(!alive(pid), "the killed redis-server is gone");
        }
        Some(id) => {
            assert_eq!(container_status(&id), "exited", "the container is stopped");
            let signal = docker_inspect("{{.State.ExitCode}}", &id);
            assert_eq!(signal, "137", "it died of SIGKILL (128 + 9)");
        }
    }
    assert!(connect(&address).is_err(), "nothing listens");
    c.restart_after(2, 0).expect("restart");
    assert_eq!(c.health(2), Health::Up);
    assert_eq!(c.address(2), address, "back at the same address");
    assert_eq!(c.holder(2).expect("look"), None, "no persistence: empty");
    assert!(c.take(2, "B", TTL_MS).expect("take"), "and B can take it");
}

/// The id the server gave the connection `con` (`CLIENT ID`).
fn client_id(con: &mut redis::Connection) -> i64 {
    redis::cmd("CLIENT")
        .arg("ID")
        .query(con)
        .expect("CLIENT ID")
}

#[test]
fn the_graders_connection_to_a_node_is_kept_for_the_next_scenario_but_not_past_a_kill() {
    let lease = grader::nodes::lease().expect("the nodes");
    let mut set = lease.nodes();
    let node = set.node(3);
    let mut first = node.grader_connection().expect("a connection");
    let id = client_id(&mut first);
    node.give_back(node.generation(), first);
    let mut again = node.grader_connection().expect("the kept connection");
    assert_eq!(
        client_id(&mut again),
        id,
        "the next scenario takes the same connection"
    );
    let opened_at = node.generation();
    node.kill();
    node.give_back(opened_at, again);
    node.restart().expect("restart");
    let mut fresh = node.grader_connection().expect("a new connection");
    let pong: String = redis::cmd("PING")
        .query(&mut fresh)
        .expect("the restarted server answers");
    assert_eq!(
        pong, "PONG",
        "a connection to the server before the kill is never handed out"
    );
    node.give_back(node.generation(), fresh);
}

#[test]
fn a_delayed_restart_keeps_the_node_down_for_its_time() {
    let mut c = Cluster::open().expect("cluster");
    c.restart_after(0, TTL_MS).expect("kill");
    c.advance(TTL_MS - 1);
    assert_eq!(c.holder(0).expect("look"), None);
    assert_eq!(c.health(0), Health::Down, "still down 1 ms before its time");
    c.advance(1);
    assert_eq!(c.holder(0).expect("look"), None);
    assert_eq!(c.health(0), Health::Up, "back once its time has come");
}

#[test]
fn one_nodes_clock_jumps_while_the_others_do_not() {
    let mut c = Cluster::open().expect("cluster");
    for i in 0..NODES {
        assert!(c.take(i, "A", TTL_MS).expect("take"));
    }
    c.jump(2, TTL_MS).expect("jump");
    let holders = c.holders().expect("look");
    for (i, holder) in holders.iter().enumerate() {
        let expected = if i == 2 { None } else { Some("A") };
        assert_eq!(holder.as_deref(), expected, "node {i}");
    }
    assert_eq!(c.ttl_left(0).expect("ttl"), Some(TTL_MS));
}

#[test]
fn a_late_reply_costs_virtual_time_only() {
    let c = Cluster::open().expect("cluster").shared();
    enter(&c).delay(3, 400);
    enter(&c).pause(4).expect("pause");
    let mut wires = Wire::to_nodes(&c);
    let started = Instant::now();
    let pong: String = redis::cmd("PING").query(&mut wires[3]).expect("ping");
    assert_eq!(pong, "PONG");
    assert_eq!(enter(&c).now_ms(), 400);
    let refused = redis::cmd("PING").query::<String>(&mut wires[4]);
    assert!(
        refused.is_err_and(|e| e.is_timeout()),
        "a paused node times out"
    );
    assert_eq!(enter(&c).now_ms(), 450, "after the client's 50 ms time-out");
    assert!(started.elapsed() < Duration::from_secs(1), "no real wait");
}

/// A node reaches another at the other's peer address (what `REPLICAOF` is given): node 0 copies
/// a key to node 1 with `MIGRATE`, a connection node 0 itself opens.
#[test]
fn a_node_reaches_another_at_its_peer_address() {
    let lease = grader::nodes::lease().expect("the nodes");
    let (from, to, peer) = {
        let set = lease.nodes();
        let nodes = set.nodes();
        let peer = (nodes[1].peer_address(), password_of(&nodes[1].url()));
        let from = nodes[0].connect().expect("node 0");
        let to = nodes[1].connect().expect("node 1");
        (from, to, peer)
    };
    let (mut from, mut to) = (from, to);
    let (peer, password) = peer;
    let key = format!("dlcourse:redlock:peer:{}", std::process::id());
    redis::cmd("SET")
        .arg(&key)
        .arg("copied")
        .exec(&mut from)
        .expect("SET");
    let migrated: String = redis::cmd("MIGRATE")
        .arg(&peer.0)
        .arg(peer.1)
        .arg(&key)
        .arg(0)
        .arg(2000)
        .arg("COPY")
        .arg("REPLACE")
        // Node 1 requires its own password, of node 0 too.
        .arg("AUTH")
        .arg(&password)
        .query(&mut from)
        .unwrap_or_else(|e| panic!("node 0 cannot reach node 1 at {peer:?}: {e}"));
    assert_eq!(migrated, "OK");
    let copied: Option<String> = redis::cmd("GET").arg(&key).query(&mut to).expect("GET");
    assert_eq!(copied.as_deref(), Some("copied"), "node 1 got the key");
    for con in [&mut from, &mut to] {
        redis::cmd("DEL").arg(&key).exec(con).expect("DEL");
    }
}

/// Container nodes only: all five on one network of this run's, labelled as its own, and on
/// no other network (Docker's default bridge included); the grader reaches each at its address
/// there, the address the others use too.
#[test]
#[ignore = "needs a Docker engine with the Redis image: GRADER_REDIS=container cargo test -p \
            grader --test nodes -- --ignored container_ (.ci/run does)"]
fn container_nodes_share_a_private_network() {
    let lease = grader::nodes::lease().expect("the nodes");
    let set = lease.nodes();
    let nodes = set.nodes();
    let Some(first) = nodes[0].container() else {
        panic!(
            "cannot run here: the nodes are processes (GRADER_REDIS=container makes them \
             containers, given a Docker engine with the image)"
        );
    };
    let networks = docker_inspect(
        "{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}",
        first,
    );
    let network = networks.trim().to_owned();
    assert!(
        network.starts_with("dlcourse-nodes-") && !network.contains(' '),
        "node 0 is on its run's network and on no other: {networks:?}"
    );
    let labels = docker_inspect("{{json .Labels}}", &network);
    assert!(
        labels.contains(&format!(
            "\"redis-course.grader.owner-pid\":\"{}\"",
            std::process::id()
        )),
        "the network names this run as its owner: {labels}"
    );
    let members = docker_inspect("{{range $id, $_ := .Containers}}{{$id}} {{end}}", &network);
    for (i, node) in nodes.iter().enumerate() {
        let id = node.container().expect("a container node");
        assert_eq!(
            docker_inspect(
                "{{range $name, $_ := .NetworkSettings.Networks}}{{$name}}{{end}}",
                id
            ),
            network,
            "node {i} is on the same network only"
        );
        assert!(
            members.contains(id),
            "the network lists node {i}: {members}"
        );
        let ip = docker_inspect(
            &format!("{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}"),
            id,
        );
        assert_eq!(
            node.peer_address(),
            (ip.clone(), 6379),
            "node {i}'s peer address"
        );
        assert_eq!(
            node.address(),
            (ip, 6379),
            "the grader reaches node {i} on the network"
        );
    }
    let bridge = docker_inspect("{{range $id, $_ := .Containers}}{{$id}} {{end}}", "bridge");
    assert!(
        nodes
            .iter()
            .all(|n| !bridge.contains(n.container().unwrap_or("?"))),
        "no node is on the default bridge: {bridge}"
    );
}

/// Run by [`a_killed_test_process_leaves_no_node_behind`] in a child process.
#[test]
#[ignore = "run by another test in a child process"]
fn child_holds_paused_nodes() {
    if std::env::var_os("NODES_TEST_CHILD").is_none() {
        return;
    }
    let mut c = Cluster::open().expect("cluster");
    c.pause(0).expect("pause");
    let pids: Vec<String> = (0..NODES).map(|i| c.pid(i).to_string()).collect();
    let containers: Vec<String> = (0..NODES).filter_map(|i| c.container(i)).collect();
    println!();
    println!("child: pids={}", pids.join(","));
    println!("child: containers={}", containers.join(","));
    let _ = std::io::stdout().flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// Whether a container with this id still exists, running or not.
fn container_exists(id: &str) -> bool {
    Command::new("docker")
        .args(["inspect", "--type", "container", id])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the docker command")
        .success()
}

/// A child holding paused nodes, once it has reported them: its nodes' pids and its
/// containers (none for process nodes).
struct NodeHolder {
    child: std::process::Child,
    pids: Vec<i32>,
    containers: Vec<String>,
}

fn start_node_holder() -> NodeHolder {
    let exe = std::env::current_exe().expect("this test binary");
    let mut child = Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            "child_holds_paused_nodes",
            "--nocapture",
        ])
        .env("NODES_TEST_CHILD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the child");
    let stdout = child.stdout.take().expect("stdout");
    let (mut pids, mut containers) = (Vec::new(), Vec::new());
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("a line");
        if let Some(list) = line.strip_prefix("child: pids=") {
            pids = list
                .split(',')
                .map(|p| p.parse::<i32>().expect("a pid"))
                .collect();
        } else if let Some(list) = line.strip_prefix("child: containers=") {
            containers = list
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            break;
        }
    }
    assert_eq!(pids.len(), NODES, "the child reported its nodes");
    assert!(pids.iter().all(|&p| alive(p)), "the nodes run");
    let child_pid = child.id();
    if !containers.is_empty() {
        assert_eq!(containers.len(), NODES, "the child reported its containers");
        assert_eq!(container_status(&containers[0]), "paused");
        let owned = server::containers_owned_by(child_pid).expect("the child's containers");
        assert_eq!(owned.len(), NODES, "the sweep sees the child's containers");
        let networks = server::networks_owned_by(child_pid).expect("the child's network");
        assert_eq!(networks.len(), 1, "the sweep sees the child's network");
    }
    NodeHolder {
        child,
        pids,
        containers,
    }
}

/// Waits up to `patience` until none of `ids` exists; returns those that still do.
fn containers_left(ids: &[String], patience: Duration) -> Vec<String> {
    let deadline = Instant::now() + patience;
    loop {
        let left: Vec<String> = ids
            .iter()
            .filter(|id| container_exists(id))
            .cloned()
            .collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Serializes the tests whose children hold nodes: a test that looks at a killed child's
/// containers must not race another's.
fn one_holder_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A SIGKILLed test process runs no exit handler, and yet leaves no node: a process node dies
/// under the watchdog, and the Docker helper, whose input ends with the process, removes the
/// containers (the paused one too) and the network, with no sweep to help it.
#[test]
fn a_killed_test_process_leaves_no_node_behind() {
    let _serial = one_holder_at_a_time();
    let NodeHolder {
        mut child,
        pids,
        containers,
    } = start_node_holder();
    let child_pid = child.id();
    child.kill().expect("SIGKILL the child");
    let _ = child.wait();
    if containers.is_empty() {
        let deadline = Instant::now() + Duration::from_secs(10);
        while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<_> = pids.iter().filter(|&&p| alive(p)).collect();
        assert!(
            left.is_empty(),
            "nodes left behind, the paused one too: {left:?}"
        );
        return;
    }
    let left = containers_left(&containers, Duration::from_secs(30));
    assert!(
        left.is_empty(),
        "the Docker helper left containers behind, the paused one too: {left:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let networks = server::networks_owned_by(child_pid).expect("the child's network");
        if networks.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the Docker helper left the network behind: {networks:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The children of process `pid`, as `/proc` lists them for each of its threads.
fn children_of(pid: u32) -> Vec<i32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the child's threads");
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// Only a killed Docker helper leaves containers: the next run's sweep finds them by their
/// owner labels (the owner is gone too) and removes them, and the network.
#[test]
#[ignore = "needs a Docker engine with the Redis image: GRADER_REDIS=container cargo test -p \
            grader --test nodes -- --ignored container_"]
fn container_nodes_of_a_killed_helper_go_with_the_next_sweep() {
    let _serial = one_holder_at_a_time();
    // This process's own nodes first, and with them its one sweep, which must not come
    // between the kill and the sweep looked at here.
    drop(grader::nodes::lease().expect("this process's nodes"));
    let NodeHolder {
        mut child,
        containers,
        ..
    } = start_node_holder();
    assert_eq!(containers.len(), NODES, "the nodes are containers");
    let child_pid = child.id();
    let helpers = children_of(child_pid);
    assert_eq!(
        helpers.len(),
        1,
        "the child runs one Docker helper: {helpers:?}"
    );
    let killed = Command::new("kill")
        .args(["-KILL", &helpers[0].to_string()])
        .status()
        .expect("the kill command");
    assert!(killed.success(), "SIGKILL the helper");
    child.kill().expect("SIGKILL the child");
    let _ = child.wait();
    assert_eq!(
        containers_left(&containers, Duration::from_secs(2)).len(),
        NODES,
        "nothing removed the containers before the sweep"
    );
    server::remove_stale_containers().expect("the sweep");
    let left = containers_left(&containers, Duration::ZERO);
    assert!(
        left.is_empty(),
        "containers left behind, the paused one too: {left:?}"
    );
    let owned = server::containers_owned_by(child_pid).expect("the child's containers");
    assert!(owned.is_empty(), "containers left behind: {owned:?}");
    let networks = server::networks_owned_by(child_pid).expect("the child's network");
    assert!(networks.is_empty(), "the network left behind: {networks:?}");
}
