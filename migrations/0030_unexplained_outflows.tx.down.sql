DROP TABLE unexplained_outflows;
