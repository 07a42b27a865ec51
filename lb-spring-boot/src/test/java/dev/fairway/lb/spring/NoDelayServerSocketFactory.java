package dev.fairway.lb.spring;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ServerSocketFactory;

/** Server sockets whose accepted sockets have TCP_NODELAY set (loopback must not stall on Nagle + delayed ACK). */
final class NoDelayServerSocketFactory extends ServerSocketFactory {
  static final NoDelayServerSocketFactory INSTANCE = new NoDelayServerSocketFactory();

  @Override
  public ServerSocket createServerSocket() throws IOException {
    return new NoDelayServerSocket(0, 50, null);
  }

  @Override
  public ServerSocket createServerSocket(int port) throws IOException {
    return new NoDelayServerSocket(port, 50, null);
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog) throws IOException {
    return new NoDelayServerSocket(port, backlog, null);
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog, InetAddress address) throws IOException {
    return new NoDelayServerSocket(port, backlog, address);
  }

  private static final class NoDelayServerSocket extends ServerSocket {
    NoDelayServerSocket(int port, int backlog, InetAddress address) throws IOException {
      super();
      if (port != 0 || address != null) {
        bind(new java.net.InetSocketAddress(address, port), backlog);
      }
    }

    @Override
    public Socket accept() throws IOException {
      Socket socket = super.accept();
      socket.setTcpNoDelay(true);
      return socket;
    }
  }
}
