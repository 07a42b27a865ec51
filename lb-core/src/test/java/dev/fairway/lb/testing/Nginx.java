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
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A real nginx (Debian's {@code nginx-light}) on free loopback ports, with its own configuration,
 * prefix, pid file and logs in a temporary directory. Every location answers {@code 200 "ok"} to any
 * method; idle keep-alive connections are closed after {@code keepalive_timeout 1s}, as a default
 * nginx in front of a service does (75 s there). {@link #close()} stops it by its pid.
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
        "  access_log off;",
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
