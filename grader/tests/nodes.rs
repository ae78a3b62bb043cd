//! The five nodes are real processes, and the faults really happen to them: a paused node answers
//! nothing to anyone, a killed one refuses connections and comes back empty, a delayed restart
//! keeps it down for its virtual time, one node's clock jumps alone, a late reply costs virtual
//! time, and a killed test process leaves no node behind, paused or not.
//!
//! The nodes always come from the process source (`redis-server` on loopback), whatever
//! `GRADER_REDIS` says: they need signals sent to their process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grader::nodes::cluster::{Cluster, enter};
use grader::nodes::{Health, NODES, NodeWire};

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

/// Sends PING on a raw socket and waits `wait` for the answer.
fn pings(port: u16, wait: Duration) -> std::io::Result<bool> {
    let mut socket = TcpStream::connect(("127.0.0.1", port))?;
    socket.set_read_timeout(Some(wait))?;
    socket.write_all(b"PING\r\n")?;
    let mut reply = [0u8; 7];
    Ok(socket.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n")
}

#[test]
fn a_paused_node_answers_nobody_and_keeps_its_data() {
    let mut c = Cluster::open().expect("cluster");
    let (port, pid) = (c.port(1), c.pid(1));
    assert!(c.take(1, "A", TTL_MS).expect("take"));
    c.pause(1).expect("pause");
    assert_eq!(c.health(1), Health::Paused);
    assert_eq!(state(pid), 'T', "the process is stopped");
    assert!(
        !pings(port, Duration::from_millis(200)).expect("the socket still accepts"),
        "a stopped redis-server must not answer"
    );
    c.resume(1).expect("resume");
    assert_eq!(c.holder(1).expect("look").as_deref(), Some("A"));
    assert!(pings(port, Duration::from_secs(2)).expect("ping"));
}

#[test]
fn a_killed_node_refuses_connections_and_restarts_empty() {
    let mut c = Cluster::open().expect("cluster");
    let (port, pid) = (c.port(2), c.pid(2));
    assert!(c.take(2, "A", TTL_MS).expect("take"));
    c.kill(2);
    assert_eq!(c.health(2), Health::Down);
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!alive(pid), "the killed redis-server is gone");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens"
    );
    c.restart_after(2, 0).expect("restart");
    assert_eq!(c.health(2), Health::Up);
    assert_eq!(c.holder(2).expect("look"), None, "no persistence: empty");
    assert!(c.take(2, "B", TTL_MS).expect("take"), "and B can take it");
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
    let mut wires = NodeWire::all(&c);
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

/// Run by [`a_killed_test_process_leaves_no_node_behind`] in a child process.
#[test]
#[ignore = "run by another test in a child process"]
fn child_holds_paused_nodes() {
    if std::env::var_os("NODES_TEST_CHILD").is_none() {
        return;
    }
    let mut c = Cluster::open().expect("cluster");
    c.pause(0).expect("pause");
    let lease_pids: Vec<i32> = (0..NODES).map(|i| c.pid(i)).collect();
    println!();
    println!(
        "child: pids={}",
        lease_pids
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let _ = std::io::stdout().flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

#[test]
fn a_killed_test_process_leaves_no_node_behind() {
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
    let mut pids = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("a line");
        if let Some(list) = line.strip_prefix("child: pids=") {
            pids = list
                .split(',')
                .map(|p| p.parse::<i32>().expect("a pid"))
                .collect();
            break;
        }
    }
    assert_eq!(pids.len(), NODES, "the child reported its nodes");
    assert!(pids.iter().all(|&p| alive(p)), "the nodes run");
    child.kill().expect("SIGKILL the child");
    let _ = child.wait();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<_> = pids.iter().filter(|&&p| alive(p)).collect();
    assert!(
        left.is_empty(),
        "nodes left behind, the paused one too: {left:?}"
    );
}
