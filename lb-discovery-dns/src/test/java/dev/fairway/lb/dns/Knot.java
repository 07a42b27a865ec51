package dev.fairway.lb.dns;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.Type;

/**
 * A real authoritative DNS server, Knot DNS (Debian's {@code knot}), on a free loopback port with its
 * own configuration, zone file, control socket and storage in a temporary directory. It serves one
 * zone from a file the test writes; {@link #reload} changes it, {@link #expire} makes the server
 * answer SERVFAIL for the zone (as for any zone it cannot serve), {@link #pause} stops the process so
 * questions time out. {@link #close()} stops it by its pid.
 *
 * <p>Why Knot: its zone reload is one control command that waits for the load
 * ({@code knotc -b zone-reload}), it serves records with exactly the TTLs of the zone file, puts the
 * SRV targets' addresses in the additional section as authoritative servers do, and answers SERVFAIL
 * for a configured zone it has no data for.
 */
final class Knot implements AutoCloseable {
  static final Path KNOTD = Path.of(System.getProperty("fairway.tool.knotd", "/usr/sbin/knotd"));
  static final Path KNOTC = Path.of(System.getProperty("fairway.tool.knotc", "/usr/sbin/knotc"));

  private final Path dir;
  private final String zone;
  private final Process server;
  final int port;

  /**
   * Skips the calling test when Knot is not installed, with how to install it; on CI ({@code CI=true})
   * fails instead, so a missing package cannot pass unnoticed.
   */
  static void requireInstalled() {
    if (Files.isExecutable(KNOTD) && Files.isExecutable(KNOTC)) {
      return;
    }
    String message = KNOTD + " or " + KNOTC + " is missing: install Debian's Knot DNS with `apt-get install knot`"
        + " (.ci/run does)";
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(message);
    }
    Assumptions.abort(message);
  }

  /** Starts Knot serving {@code zone} (such as {@code svc.test}) with the records of {@code zoneFile}. */
  static Knot start(String zone, String zoneFile) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("fairway-knot");
    int port = freePort();
    String config = String.join("\n",
        "server:",
        "    listen: 127.0.0.1@" + port,
        "    rundir: " + dir,
        "    pidfile: " + dir.resolve("knot.pid"),
        "    udp-workers: 1",
        "    tcp-workers: 1",
        "    background-workers: 1",
        "log:",
        "  - target: stderr",
        "    any: info",
        "control:",
        "    listen: " + dir.resolve("knot.sock"),
        "database:",
        "    storage: " + dir.resolve("db"),
        "template:",
        "  - id: default",
        "    storage: " + dir,
        "    file: \"%s.zone\"",
        "    zonefile-sync: -1",      // never write the zone back over the test's file
        "    zonefile-load: whole",   // a reload reads the whole file
        "    journal-content: none",
        "zone:",
        "  - domain: " + zone,
        "");
    Files.writeString(dir.resolve("knot.conf"), config, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve(zone + ".zone"), zoneFile, StandardCharsets.UTF_8);
    Process server = new ProcessBuilder(KNOTD.toString(), "-c", dir.resolve("knot.conf").toString())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("knot.log").toFile())
        .start();
    Knot knot = new Knot(dir, zone, server, port);
    try {
      knot.awaitAnswering();
    } catch (IOException | RuntimeException | Error e) {
      knot.close();
      throw e;
    }
    return knot;
  }

  private Knot(Path dir, String zone, Process server, int port) {
    this.dir = dir;
    this.zone = zone;
    this.server = server;
    this.port = port;
  }

  InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
  }

  /** Writes the zone file anew and has Knot load it; returns when the load has finished. */
  void reload(String zoneFile) throws IOException, InterruptedException {
    Files.writeString(dir.resolve(zone + ".zone"), zoneFile, StandardCharsets.UTF_8);
    control("-b", "zone-reload", zone);
  }

  /** Drops the zone's data: Knot answers SERVFAIL for every name in it until {@link #restore}. */
  void expire() throws IOException, InterruptedException {
    control("-b", "-f", "zone-purge", zone, "+expire");
  }

  /** Loads the zone again after {@link #expire} (from the file, which may have been changed). */
  void restore(String zoneFile) throws IOException, InterruptedException {
    Files.writeString(dir.resolve(zone + ".zone"), zoneFile, StandardCharsets.UTF_8);
    control("reload");
    awaitAnswering();
  }

  /** Stops the server process (SIGSTOP to its own pid): questions go unanswered until {@link #resume}. */
  void pause() throws IOException, InterruptedException {
    signal("-STOP");
  }

  void resume() throws IOException, InterruptedException {
    signal("-CONT");
  }

  private void signal(String signal) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", signal, Long.toString(server.pid()))
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IOException("kill " + signal + " " + server.pid() + " failed");
    }
  }

  private void control(String... action) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(KNOTC.toString(), "-c", dir.resolve("knot.conf").toString(),
        "-s", dir.resolve("knot.sock").toString(), "-t", "10"));
    command.addAll(List.of(action));
    Path out = dir.resolve("knotc.log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    if (!p.waitFor(20, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(command + " did not finish: " + log());
    }
    if (p.exitValue() != 0) {
      throw new IOException(command + " failed: " + Files.readString(out) + log());
    }
  }

  /** Asks for the zone's SOA until Knot answers it (NOERROR), within 30 s. */
  private void awaitAnswering() throws IOException, InterruptedException {
    SimpleResolver probe = new SimpleResolver(address());
    probe.setTimeout(java.time.Duration.ofMillis(300));
    Message query = Message.newQuery(Record.newRecord(Name.fromString(zone, Name.root), Type.SOA, DClass.IN));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // generous: a loaded machine
    for (;;) {
      try {
        if (probe.send(query).getRcode() == Rcode.NOERROR) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      if (!server.isAlive() || System.nanoTime() > deadline) {
        throw new IOException("Knot did not answer for " + zone + " on 127.0.0.1:" + port + ": " + log());
      }
      Thread.sleep(20);
    }
  }

  String log() {
    try {
      return Files.readString(dir.resolve("knot.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Ends the server by its own pid (resumed first, in case it was paused) and removes its directory. */
  @Override
  public void close() throws IOException, InterruptedException {
    try {
      if (server.isAlive()) {
        try {
          resume();
        } catch (IOException ignored) {
          // it may have ended meanwhile
        }
        server.destroy(); // SIGTERM: Knot shuts down cleanly
        if (!server.waitFor(10, TimeUnit.SECONDS)) {
          server.destroyForcibly();
          server.waitFor(5, TimeUnit.SECONDS);
        }
      }
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** A loopback port free for both UDP and TCP, as Knot listens on both. */
  private static int freePort() throws IOException {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    for (int attempt = 0; attempt < 50; attempt++) {
      try (ServerSocket tcp = new ServerSocket(0, 1, loopback)) {
        int port = tcp.getLocalPort();
        try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(loopback, port))) {
          return port;
        } catch (IOException taken) {
          // UDP side in use: try another
        }
      }
    }
    throw new IOException("no loopback port free for both UDP and TCP");
  }
}
