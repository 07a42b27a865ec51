package dev.fairway.lb.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A real nginx (Debian's {@code nginx-light}) on free loopback ports, with its own configuration,
 * prefix, pid file and logs in a temporary directory. Every location answers {@code 200 "ok"} to any
 * method; idle keep-alive connections are closed after {@code keepalive_timeout 1s}, as a default
 * nginx in front of a service does (75 s there). Its access log tells what it answered on each port
 * ({@link #served}). {@link #close()} stops it by its pid.
 */
public final class Nginx implements AutoCloseable {
  public static final Path BINARY = Path.of("/usr/sbin/nginx");

  private final Path dir;
  private final Path conf;
  private final Process master;
  public final List<Integer> ports;

  /**
   * Skips the calling test when nginx is not installed, with how to install it; on CI ({@code
   * CI=true}) fails instead, so a missing package cannot pass unnoticed.
   */
  public static void requireInstalled() {
    if (Files.isExecutable(BINARY)) {
      return;
    }
    String message = BINARY + " is missing: install Debian's nginx with `apt-get install nginx-light` (.ci/run does)";
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(message);
    }
    Assumptions.abort(message);
  }

  public static Nginx start(int portCount) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("fairway-nginx");
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < portCount; i++) {
      ports.add(freePort());
    }
    StringBuilder listen = new StringBuilder();
    for (int port : ports) {
      listen.append("    listen 127.0.0.1:").append(port).append(";\n");
    }
    String config = String.join("\n",
        "daemon off;",
        "worker_processes 1;",
        "pid " + dir.resolve("nginx.pid") + ";",
        "error_log " + dir.resolve("error.log") + " warn;",
        "events { worker_connections 1024; }",
        "http {",
        // One line per answered request: which port, on which connection, which call (X-Call).
        "  log_format fairway '$server_port $connection $connection_requests $http_x_call';",
        "  access_log " + dir.resolve("access.log") + " fairway;",
        "  client_body_temp_path " + dir.resolve("client_body") + ";",
        "  proxy_temp_path " + dir.resolve("proxy") + ";",
        "  fastcgi_temp_path " + dir.resolve("fastcgi") + ";",
        "  uwsgi_temp_path " + dir.resolve("uwsgi") + ";",
        "  scgi_temp_path " + dir.resolve("scgi") + ";",
        "  keepalive_timeout 1s;",
        "  server {",
        listen.toString(),
        "    location / { return 200 \"ok\"; }",
        "  }",
        "}",
        "");
    Path conf = dir.resolve("nginx.conf");
    Files.writeString(conf, config, StandardCharsets.UTF_8);
    Process master = new ProcessBuilder(BINARY.toString(), "-p", dir.toString(), "-c", conf.toString(),
        "-e", dir.resolve("error.log").toString())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("stdout.log").toFile())
        .start();
    Nginx nginx = new Nginx(dir, conf, master, List.copyOf(ports));
    try {
      nginx.awaitListening();
    } catch (IOException | RuntimeException | Error e) {
      nginx.close();
      throw e;
    }
    return nginx;
  }

  private Nginx(Path dir, Path conf, Process master, List<Integer> ports) {
    this.dir = dir;
    this.conf = conf;
    this.master = master;
    this.ports = ports;
  }

  private void awaitListening() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (int port : ports) {
      for (;;) {
        try (Socket probe = new Socket()) {
          probe.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 500);
          break;
        } catch (IOException notYet) {
          if (!master.isAlive() || System.nanoTime() > deadline) {
            throw new IOException("nginx did not listen on 127.0.0.1:" + port + ": " + log(), notYet);
          }
          Thread.sleep(20);
        }
      }
    }
  }

  /**
   * What nginx has answered on {@code port} so far, from its access log (a line is written after its
   * response, so wait for a count rather than read it once): the requests, the connections they came
   * on, and how often each {@code X-Call} id was answered.
   */
  public Served served(int port) throws IOException {
    Path log = dir.resolve("access.log");
    int requests = 0;
    Set<String> connections = new HashSet<>();
    Map<String, Integer> calls = new HashMap<>();
    for (String line : Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.<String>of()) {
      String[] fields = line.split(" ");
      if (fields.length < 4 || !fields[0].equals(Integer.toString(port))) {
        continue;
      }
      requests++;
      connections.add(fields[1]);
      if (!fields[3].equals("-")) {
        calls.merge(fields[3], 1, Integer::sum);
      }
    }
    return new Served(requests, connections.size(), Map.copyOf(calls));
  }

  /** What nginx answered on one port: requests, the distinct connections they came on, answers per call id. */
  public record Served(int requests, int connections, Map<String, Integer> calls) {
    /** Whether nginx answered the call with this id. */
    public boolean answered(String callId) {
      return calls.containsKey(callId);
    }

    /** Call ids nginx answered more than once, with the count ("id x2"). */
    public List<String> repeatedCalls() {
      List<String> repeated = new ArrayList<>();
      calls.forEach((id, n) -> {
        if (n > 1) {
          repeated.add(id + " x" + n);
        }
      });
      return repeated;
    }
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("stdout.log")) + Files.readString(dir.resolve("error.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Asks the master (by the pid in its pid file) to quit, waits, then ends it by its own pid if need be. */
  @Override
  public void close() throws IOException, InterruptedException {
    try {
      if (master.isAlive()) {
        Process quit = new ProcessBuilder(BINARY.toString(), "-p", dir.toString(), "-c", conf.toString(),
            "-e", dir.resolve("error.log").toString(), "-s", "quit")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
        quit.waitFor(10, TimeUnit.SECONDS);
        if (!master.waitFor(10, TimeUnit.SECONDS)) {
          master.destroy(); // SIGTERM to the master's own pid: fast shutdown
          if (!master.waitFor(5, TimeUnit.SECONDS)) {
            master.destroyForcibly();
          }
        }
      }
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return socket.getLocalPort();
    }
  }
}
