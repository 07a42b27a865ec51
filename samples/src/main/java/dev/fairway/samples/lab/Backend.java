package dev.fairway.samples.lab;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.LockSupport;

/**
 * One simulated backend: a JDK {@link HttpServer} on a loopback port with a fixed pool of
 * {@code workers} threads behind a FIFO queue (the executor's), each request holding a worker for the
 * service time. Responses carry {@code X-Backend: <index>}.
 *
 * <p>Health answers on a separate admin port ({@code GET /health}), as a management port does in
 * real services: a health endpoint behind the same FIFO queue would time out whenever a slow
 * backend is overloaded (round robin queues most users at backend-4), and active health would then
 * pull a live backend out of service and skew every strategy's numbers.
 *
 * <p>{@link #kill()} closes both listeners and every open connection and interrupts the requests in
 * service, so callers see refused connections and cut exchanges; {@link #restart()} binds the same
 * ports again. A response goes out whole or not at all, as a small response from a real server does
 * (one TCP segment): the JDK's server writes the headers and the body separately, and a kill between
 * the two writes would hand the caller a 200 with a truncated body, a failure that happens after the
 * interceptor returned the response and that no router could retry.
 */
final class Backend implements AutoCloseable {
  static final String BACKEND_HEADER = "X-Backend";

  static {
    // Without TCP_NODELAY every exchange on loopback stalls ~40 ms (Nagle meets delayed ACK). The
    // property is read once, when the first server is created, so it must be set before that.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private final int index;
  private final long serviceNanos;
  private final int workers;
  private final byte[] body;
  private final LongAdder served = new LongAdder();
  private final AtomicInteger inService = new AtomicInteger();
  /** Held (shared) while a response is written, (exclusive) while killing. */
  private final ReentrantReadWriteLock responding = new ReentrantReadWriteLock();
  private volatile boolean dead;
  private int port;
  private int adminPort;
  private HttpServer server;
  private HttpServer admin;
  private ThreadPoolExecutor pool;

  Backend(int index, long serviceNanos, int workers) {
    this.index = index;
    this.serviceNanos = serviceNanos;
    this.workers = workers;
    this.body = ("backend-" + index + "\n").getBytes(StandardCharsets.US_ASCII);
  }

  /** Starts on a port the OS picks. */
  synchronized Backend start() throws IOException {
    bind(0, 0);
    return this;
  }

  /** Starts again on the port it had (retrying briefly if the OS has not released it yet). */
  synchronized void restart() throws IOException {
    if (server != null) {
      return;
    }
    BindException last = null;
    for (int attempt = 0; attempt < 50; attempt++) {
      try {
        bind(port, adminPort);
        return;
      } catch (BindException e) {
        last = e;
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
      }
    }
    throw last;
  }

  private void bind(int wantedPort, int wantedAdminPort) throws IOException {
    HttpServer a = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), wantedAdminPort), 64);
    HttpServer s;
    try {
      s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), wantedPort), 1024);
    } catch (IOException e) {
      a.stop(0);
      throw e;
    }
    a.createContext("/health", exchange -> {
      try (exchange) {
        byte[] ok = "ok\n".getBytes(StandardCharsets.US_ASCII);
        exchange.sendResponseHeaders(200, ok.length);
        exchange.getResponseBody().write(ok);
      }
    });
    a.start();
    ExecutorService executor =
        Executors.newFixedThreadPool(
            workers,
            r -> {
              Thread t = new Thread(r, "backend-" + index + "-worker");
              t.setDaemon(true);
              return t;
            });
    s.setExecutor(executor);
    s.createContext("/", this::handle);
    s.start();
    this.pool = (ThreadPoolExecutor) executor;
    this.server = s;
    this.port = s.getAddress().getPort();
    this.admin = a;
    this.adminPort = a.getAddress().getPort();
    this.dead = false;
  }

  private void handle(HttpExchange exchange) throws IOException {
    inService.incrementAndGet();
    try (exchange) {
      try (InputStream in = exchange.getRequestBody()) {
        in.transferTo(OutputStream.nullOutputStream());
      }
      long deadline = System.nanoTime() + serviceNanos;
      for (long left = serviceNanos; left > 0; left = deadline - System.nanoTime()) {
        LockSupport.parkNanos(left);
        if (Thread.currentThread().isInterrupted()) {
          return; // killed: the connection is already closed
        }
      }
      responding.readLock().lock();
      try {
        if (dead) {
          return;
        }
        exchange.getResponseHeaders().set(BACKEND_HEADER, Integer.toString(index));
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      } finally {
        responding.readLock().unlock();
      }
      served.increment();
    } finally {
      inService.decrementAndGet();
    }
  }

  /** Closes the listener and all connections at once and interrupts requests in service. */
  synchronized void kill() {
    HttpServer s = server;
    if (s == null) {
      return;
    }
    server = null;
    responding.writeLock().lock(); // waits for responses being written (microseconds), blocks new ones
    try {
      dead = true;
      s.stop(0);
      pool.shutdownNow();
      admin.stop(0);
    } finally {
      responding.writeLock().unlock();
    }
  }

  /** Requests queued or in service right now (0 when dead). */
  int load() {
    ThreadPoolExecutor p = pool;
    return server == null || p == null ? 0 : inService.get() + p.getQueue().size();
  }

  int index() {
    return index;
  }

  int port() {
    return port;
  }

  /** Where {@code GET /health} answers. */
  int adminPort() {
    return adminPort;
  }

  int workers() {
    return workers;
  }

  long serviceNanos() {
    return serviceNanos;
  }

  /** Responses written since start. */
  long served() {
    return served.sum();
  }

  @Override
  public void close() {
    kill();
  }
}
