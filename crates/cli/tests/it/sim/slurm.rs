//! The Slurm job array of docs/simulator.md ("Sharded sweeps") on a real
//! single-node Slurm cluster: the test starts munge, slurmctld and slurmd
//! on localhost in a scratch directory (its own configuration, ports,
//! state and logs; process tracking by `linuxproc`, no cgroups), submits
//! the two scripts exactly as the page shows them, and compares the merged
//! files byte for byte with an unsharded run. The daemons are stopped when
//! the test ends, whether it passes or not.
//!
//! A machine without Slurm, munge or root skips the test with a message,
//! unless `ROUTEX_REQUIRE_SLURM` is set (`.ci/run` sets it once it has
//! installed the packages), as the Neovim test does.

use crate::cli::run::scratch;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The daemons this test started; killed on drop.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in &mut self.daemons {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Why this machine cannot run the test, if it cannot.
fn missing() -> Option<String> {
    for tool in [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "sinfo",
        "timeout",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!("`{tool}` is not installed"));
        }
    }
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("slurmd must run as root".into());
    }
    None
}

/// A TCP port free on localhost now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("address").port()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(sub)).expect("cluster dir");
        }
        let hostname = Command::new("hostname").output().expect("hostname");
        let hostname = String::from_utf8_lossy(&hostname.stdout).trim().to_string();
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        let (ctld_port, slurmd_port) = (free_port(), free_port());
        std::fs::write(
            &conf,
            format!(
                "ClusterName=routex\n\
                 SlurmctldHost=localhost\n\
                 SlurmctldPort={ctld_port}\n\
                 SlurmdPort={slurmd_port}\n\
                 SlurmUser=root\n\
                 AuthType=auth/munge\n\
                 AuthInfo=socket={d}/munge.socket\n\
                 CredType=cred/munge\n\
                 StateSaveLocation={d}/state\n\
                 SlurmdSpoolDir={d}/spool\n\
                 SlurmctldPidFile={d}/slurmctld.pid\n\
                 SlurmdPidFile={d}/slurmd.pid\n\
                 SlurmctldLogFile={d}/log/slurmctld.log\n\
                 SlurmdLogFile={d}/log/slurmd.log\n\
                 ProctrackType=proctrack/linuxproc\n\
                 TaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\n\
                 SelectType=select/cons_tres\n\
                 SelectTypeParameters=CR_CPU\n\
                 ReturnToService=2\n\
                 MpiDefault=none\n\
                 NodeName=routex NodeHostname={hostname} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
                 PartitionName=routex Nodes=routex Default=YES MaxTime=INFINITE State=UP\n"
            ),
        )
        .expect("slurm.conf");
        let spawn = |program: &str, args: &[&str]| {
            Command::new(program)
                .args(args)
                .env("SLURM_CONF", &conf)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("start {program}: {e}"))
        };
        let mut cluster = Cluster {
            dir: dir.to_path_buf(),
            conf: conf.clone(),
            daemons: Vec::new(),
        };
        let socket = format!("--socket={d}/munge.socket");
        let munge_pid = format!("--pid-file={d}/munged.pid");
        let munge_log = format!("--log-file={d}/log/munged.log");
        let munge_seed = format!("--seed-file={d}/munge.seed");
        cluster.daemons.push(spawn(
            "munged",
            &[
                "--foreground",
                "--force",
                &socket,
                &munge_pid,
                &munge_log,
                &munge_seed,
            ],
        ));
        cluster.wait_for("munge", || dir.join("munge.socket").exists());
        let conf_arg = conf.to_str().expect("utf-8 path");
        cluster
            .daemons
            .push(spawn("slurmctld", &["-D", "-f", conf_arg]));
        cluster
            .daemons
            .push(spawn("slurmd", &["-D", "-f", conf_arg, "-N", "routex"]));
        let conf_for_sinfo = conf.clone();
        cluster.wait_for("the node to be idle", move || {
            Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env("SLURM_CONF", &conf_for_sinfo)
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        cluster
    }

    /// Polls `ready` for up to 60 s; panics with the daemons' logs.
    fn wait_for(&self, what: &str, mut ready: impl FnMut() -> bool) {
        let start = Instant::now();
        while !ready() {
            if start.elapsed() > Duration::from_secs(60) {
                panic!("waited 60 s for {what}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn logs(&self) -> String {
        let mut all = String::new();
        if let Ok(entries) = std::fs::read_dir(self.dir.join("log")) {
            for entry in entries.flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                all.push_str(&format!("== {}\n{text}\n", entry.path().display()));
            }
        }
        all
    }

    /// `sbatch ARGS` in `work`, with the routex binary first on PATH (the
    /// jobs inherit this environment); at most 5 minutes.
    fn sbatch(&self, work: &Path, args: &[&str]) -> Output {
        let bin = Path::new(env!("CARGO_BIN_EXE_routex"))
            .parent()
            .expect("binary dir")
            .to_path_buf();
        let path = std::env::var("PATH").unwrap_or_default();
        Command::new("timeout")
            .arg("300")
            .arg("sbatch")
            .args(args)
            .current_dir(work)
            .env("SLURM_CONF", &self.conf)
            .env("PATH", format!("{}:{path}", bin.display()))
            .env("NO_COLOR", "1")
            .output()
            .expect("run sbatch")
    }
}

/// The content of the fenced block of docs/simulator.md whose info string
/// is `info`.
fn docs_block(info: &str) -> String {
    let page = std::fs::read_to_string(crate::repo().join("docs/simulator.md")).expect("page");
    let fence = format!("```{info}\n");
    let start = page
        .find(&fence)
        .unwrap_or_else(|| panic!("docs/simulator.md has no ```{info} block"))
        + fence.len();
    let end = start + page[start..].find("```").expect("closing fence");
    page[start..end].to_string()
}

#[test]
fn the_documented_job_array_merges_to_the_unsharded_files() {
    if let Some(why) = missing() {
        assert!(
            std::env::var_os("ROUTEX_REQUIRE_SLURM").is_none(),
            "ROUTEX_REQUIRE_SLURM is set but {why}"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let dir = scratch("slurm");
    let cluster = Cluster::start(&dir.join("cluster"));
    let work = dir.join("work");
    std::fs::create_dir_all(work.join("log")).expect("work dir");
    std::fs::copy(
        crate::repo().join("crates/sim/tests/inputs/small.json"),
        work.join("scenario.json"),
    )
    .expect("scenario");
    let array = docs_block("sh slurm-array");
    let merge = docs_block("sh slurm-merge");
    std::fs::write(work.join("sweep.sh"), &array).expect("sweep.sh");
    std::fs::write(work.join("merge.sh"), &merge).expect("merge.sh");
    let out = cluster.sbatch(&work, &["--parsable", "-o", "log/%A_%a.out", "sweep.sh"]);
    assert!(out.status.success(), "{}\n{}", text(&out), cluster.logs());
    let array_id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dependency = format!("--dependency=afterok:{array_id}");
    let out = cluster.sbatch(
        &work,
        &["--wait", "-o", "log/merge-%j.out", &dependency, "merge.sh"],
    );
    let job_logs = |work: &Path| {
        let mut all = String::new();
        for entry in std::fs::read_dir(work.join("log"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
            all.push_str(&format!("== {}\n{body}\n", entry.path().display()));
        }
        all
    };
    assert!(
        out.status.success(),
        "{}\n{}\n{}",
        text(&out),
        job_logs(&work),
        cluster.logs()
    );
    for k in 1..=4 {
        assert!(
            work.join(format!("results/shard-{k}-of-4.json")).exists(),
            "shard {k} missing\n{}",
            job_logs(&work)
        );
    }
    // The unsharded run the merge must reproduce.
    let direct = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args(["sim", "run", "scenario.json", "--quick", "--out", "direct"])
        .current_dir(&work)
        .env("NO_COLOR", "1")
        .output()
        .expect("run routex");
    assert!(direct.status.success(), "{}", text(&direct));
    for file in routex_sim::report::results::FILES {
        let merged = std::fs::read(work.join("results/merged").join(file)).expect(file);
        let unsharded = std::fs::read(work.join("direct").join(file)).expect(file);
        assert!(merged == unsharded, "{file} differs from the unsharded run");
    }
    drop(cluster);
}
