//! Standard input and output as an lsp-server `Connection`. lsp-server's
//! own stdio transport hands messages over one at a time (a rendezvous
//! channel), so the loop could never see a `$/cancelRequest` behind the
//! request it cancels. This reader reads ahead into a queue of
//! [`READ_AHEAD`] messages (bounded: a client that floods the server waits
//! for it) and skips a message whose JSON is invalid instead of hanging up.

use lsp_server::{Connection, Message};
use std::io::{self, BufReader};
use std::thread::{self, JoinHandle};

/// Messages read but not yet handled, at most.
pub const READ_AHEAD: usize = 1024;

pub struct IoThreads {
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl IoThreads {
    pub fn join(self) {
        let _ = self.reader.join();
        let _ = self.writer.join();
    }
}

pub fn stdio() -> (Connection, IoThreads) {
    let (to_server, receiver) = crossbeam_channel::bounded::<Message>(READ_AHEAD);
    let reader = thread::spawn(move || {
        let mut stdin = BufReader::new(io::stdin().lock());
        loop {
            match Message::read(&mut stdin) {
                Ok(Some(message)) => {
                    let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                    if to_server.send(message).is_err() || exit {
                        break;
                    }
                }
                // The end of input: the loop sees the channel close.
                Ok(None) => break,
                // A frame whose body is not a message: skipped, the next
                // frame is read (the header said where this one ended).
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    eprintln!("routex lsp: skipped a malformed message: {e}");
                }
                Err(_) => break,
            }
        }
    });
    let (sender, from_server) = crossbeam_channel::unbounded::<Message>();
    let writer = thread::spawn(move || {
        let mut stdout = io::stdout().lock();
        for message in from_server {
            if message.write(&mut stdout).is_err() {
                break;
            }
        }
    });
    (
        Connection { sender, receiver },
        IoThreads { reader, writer },
    )
}
