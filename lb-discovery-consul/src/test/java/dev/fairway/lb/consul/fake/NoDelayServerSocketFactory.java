package dev.fairway.lb.consul.fake;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ServerSocketFactory;

/**
 * Server sockets whose accepted connections have TCP_NODELAY set: on loopback, Nagle plus delayed
 * ACKs would otherwise add ~40 ms to small replies and distort every timing in the tests. Also keeps
 * SO_REUSEADDR on, so a stopped fake agent can come back on its port.
 */
public final class NoDelayServerSocketFactory extends ServerSocketFactory {
  private final java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();

  /** Connections accepted so far by the server sockets of this factory. */
  public int accepted() {
    return accepted.get();
  }

  @Override
  public ServerSocket createServerSocket() throws IOException {
    return new NoDelayServerSocket();
  }

  @Override
  public ServerSocket createServerSocket(int port) throws IOException {
    ServerSocket s = new NoDelayServerSocket();
    s.bind(new java.net.InetSocketAddress(port));
    return s;
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog) throws IOException {
    ServerSocket s = new NoDelayServerSocket();
    s.bind(new java.net.InetSocketAddress(port), backlog);
    return s;
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog, InetAddress address) throws IOException {
    ServerSocket s = new NoDelayServerSocket();
    s.bind(new java.net.InetSocketAddress(address, port), backlog);
    return s;
  }

  private final class NoDelayServerSocket extends ServerSocket {
    NoDelayServerSocket() throws IOException {
      super();
      super.setReuseAddress(true);
    }

    /**
     * Always on. MockWebServer turns it off for ephemeral ports, but a fake agent that comes back on
     * the same port must be able to bind while the old connections sit in TIME_WAIT.
     */
    @Override
    public void setReuseAddress(boolean on) throws java.net.SocketException {
      super.setReuseAddress(true);
    }

    @Override
    public Socket accept() throws IOException {
      Socket s = super.accept();
      s.setTcpNoDelay(true);
      accepted.incrementAndGet();
      return s;
    }
  }
}
