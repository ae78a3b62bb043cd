//! `course-docker`: every Docker call the grader makes, in a program of its own.
//!
//! The grader's judge starts this program when it first needs a container (the one Redis
//! server, Redlock's nodes, the replica pair) and speaks to it over two pipes, one JSON line
//! each way per request (`course-docker-protocol`). So the judge itself links no Docker client,
//! and a learner who grades against a local `redis-server` never builds one; the judge builds
//! this program on first need, beside itself.
//!
//! Its standard input is the judge's: when it ends, because the judge exited or was killed,
//! even by SIGKILL, this program removes every container it started and then every network
//! it created, and exits. It runs in a process group of its own, so that a Ctrl-C in the
//! terminal or a kill of the judge's group leaves it to do that. Only a kill of this program
//! itself leaves containers behind; they carry their owner's labels, and the next run's sweep
//! removes them.

mod calls;
mod start;

use std::io::{BufRead, Write};

use course_docker_protocol::{Answer, Failure, FailureKind, Request};

use calls::Helper;

fn main() {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("course-docker: cannot start an async runtime: {e}");
            std::process::exit(1)
        }
    };
    let mut helper = Helper::default();
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        // A read error is the end of the judge, as the end of input is.
        let Ok(line) = line else { break };
        let answer: Answer = match serde_json::from_str::<Request>(&line) {
            Ok(request) => runtime.block_on(helper.handle(request)),
            Err(e) => Err(Failure {
                kind: FailureKind::Refused,
                message: format!("the Docker helper cannot read the request: {e}"),
            }),
        };
        let text = serde_json::to_string(&answer).unwrap_or_else(|e| {
            format!(r#"{{"Err":{{"kind":"Refused","message":"unencodable answer: {e}"}}}}"#)
        });
        if writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
    }
    runtime.block_on(helper.remove_everything());
}
